// Package tenancy is who holds what: orgs, the workspaces in an org and
// the projects in a workspace, as callers create, find and list them, and
// the names people know them by. A project's runtime is the runtime
// service's (internal/runtime); an org's credits the ledger's.
package tenancy

import (
	"context"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// NameRE is the shape of org, workspace and project names.
var NameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// ValidName is 400 invalid_name unless name has NameRE's shape; kind
// ("org", "workspace", "project") names what it names.
func ValidName(kind, name string) error {
	if !NameRE.MatchString(name) {
		return errdefs.InvalidArgument("invalid_name", "%s name %q must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit", kind, name)
	}
	return nil
}

// OrgOpener prepares what a new org needs beside its row, in the
// transaction that creates it (the ledger opens its credit account).
type OrgOpener interface {
	OpenOrg(ctx context.Context, q store.CreditQueries, orgID string) error
}

// Store is what the service uses of the store: orgs (created in a
// transaction with what the opener adds), workspaces, projects, a user's
// memberships, and the names of runtimes.
type Store interface {
	store.Transactor
	nameStore
	// Check: see store.Store.
	Check(ctx context.Context) error
	ListOrgs(ctx context.Context, page store.Page) ([]store.Org, string, error)
	ListUserOrgs(ctx context.Context, userID string) ([]store.OrgMember, error)
	CreateWorkspace(ctx context.Context, w store.Workspace) error
	ListWorkspaces(ctx context.Context, orgID string, page store.Page) ([]store.Workspace, string, error)
	GetProjectByName(ctx context.Context, workspaceID, name string) (store.Project, error)
	ListProjects(ctx context.Context, workspaceID string, page store.Page) ([]store.Project, string, error)
}

// Config configures a Service.
type Config struct {
	Store Store
	// Opener, when set, runs in the transaction that creates an org.
	Opener OrgOpener
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service creates, finds and lists orgs, workspaces and projects.
type Service struct {
	store  Store
	opener OrgOpener
	now    func() time.Time
}

// New returns a Service.
func New(cfg Config) *Service {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Service{
		store:  cfg.Store,
		opener: cfg.Opener,
		now:    func() time.Time { return now().UTC().Truncate(time.Microsecond) },
	}
}

// OpenOrgsWith makes o the opener of the orgs created from now on (the
// ledger, when its component mounts it). Call it before the service is
// shared.
func (s *Service) OpenOrgsWith(o OrgOpener) { s.opener = o }

// Check reports whether the records answer and their schema is the one
// this build expects (a readiness check).
func (s *Service) Check(ctx context.Context) error { return s.store.Check(ctx) }

// CreateOrg creates an org named name, with what the opener adds: 400
// invalid_name for a name of the wrong shape, 409 org_exists when the
// name is taken.
func (s *Service) CreateOrg(ctx context.Context, name string) (store.Org, error) {
	if err := ValidName("org", name); err != nil {
		return store.Org{}, err
	}
	o := store.Org{ID: uuid.NewString(), Name: name, CreatedAt: s.now()}
	err := s.store.InTx(ctx, func(q store.Queries) error {
		if err := q.CreateOrg(ctx, o); err != nil {
			return err
		}
		if s.opener != nil {
			return s.opener.OpenOrg(ctx, q, o.ID) // its starting credits, if any
		}
		return nil
	})
	if err != nil {
		if errdefs.IsConflict(err) {
			err = errdefs.Conflict("org_exists", "an org named %q already exists", name).WithCause(err)
		}
		return store.Org{}, err
	}
	return s.store.GetOrg(ctx, o.ID)
}

// Org finds an org by id.
func (s *Service) Org(ctx context.Context, id string) (store.Org, error) {
	return s.store.GetOrg(ctx, id)
}

// Viewer is who lists orgs: a key kept to one org (OrgID), a signed-in
// user (UserID), or the installation admin.
type Viewer struct {
	OrgID        string
	UserID       string
	Installation bool
}

// Orgs lists the orgs v sees: a key's own org; a user's orgs, in one
// page; every org, a page at a time, for the installation admin.
func (s *Service) Orgs(ctx context.Context, v Viewer, page store.Page) ([]store.Org, string, error) {
	switch {
	case v.OrgID != "":
		o, err := s.store.GetOrg(ctx, v.OrgID)
		if err != nil {
			return nil, "", err
		}
		return []store.Org{o}, "", nil
	case !v.Installation:
		ms, err := s.store.ListUserOrgs(ctx, v.UserID)
		if err != nil {
			return nil, "", err
		}
		orgs := make([]store.Org, 0, len(ms))
		for _, m := range ms {
			o, err := s.store.GetOrg(ctx, m.OrgID)
			if err != nil {
				return nil, "", err
			}
			orgs = append(orgs, o)
		}
		return orgs, "", nil
	}
	return s.store.ListOrgs(ctx, page)
}

// CreateWorkspace creates a workspace named name in org o: 400
// invalid_name, 409 workspace_exists when the org has one by that name.
func (s *Service) CreateWorkspace(ctx context.Context, o store.Org, name string) (store.Workspace, error) {
	if err := ValidName("workspace", name); err != nil {
		return store.Workspace{}, err
	}
	ws := store.Workspace{ID: uuid.NewString(), OrgID: o.ID, Name: name, CreatedAt: s.now()}
	if err := s.store.CreateWorkspace(ctx, ws); err != nil {
		if errdefs.IsConflict(err) {
			err = errdefs.Conflict("workspace_exists", "a workspace named %q already exists in org %q", name, o.Name).WithCause(err)
		}
		return store.Workspace{}, err
	}
	return s.store.GetWorkspace(ctx, ws.ID)
}

// Workspaces lists an org's workspaces. A caller kept to some workspaces
// (only not nil) sees those that still exist, oldest first, in one page.
func (s *Service) Workspaces(ctx context.Context, orgID string, only []string, page store.Page) ([]store.Workspace, string, error) {
	if only == nil {
		return s.store.ListWorkspaces(ctx, orgID, page)
	}
	wss := make([]store.Workspace, 0, len(only))
	for _, id := range only {
		ws, err := s.store.GetWorkspace(ctx, id)
		if errdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		wss = append(wss, ws)
	}
	slices.SortFunc(wss, func(x, y store.Workspace) int { return x.CreatedAt.Compare(y.CreatedAt) })
	return wss, "", nil
}
