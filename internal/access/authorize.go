package access

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// Need is what an action asks of its principal: nothing, any credential,
// the installation admin, or at least a role where it acts. Every route
// of the API, a preview and an SSH connection name one.
type Need string

// Needs, lowest first; a role includes the ones below it (auth.Role).
const (
	Public       Need = "public"
	Any          Need = "any"
	Installation Need = "installation"
	Viewer            = Need(auth.RoleViewer)
	Member            = Need(auth.RoleMember)
	Admin             = Need(auth.RoleAdmin)
	Owner             = Need(auth.RoleOwner)
)

// Target is where an action acts: nowhere in particular (installation
// actions), an org by name, a workspace of it by name, or a runtime.
type Target struct {
	// Org and Workspace are names, as a path gives them; Workspace ""
	// is org-wide.
	Org       string
	Workspace string
	// Narrow lets a key narrowed to one workspace act org-wide here; the
	// action keeps it to its workspace.
	Narrow bool
	// Action names the action in a refusal ("GET /api/v1/org/{org}").
	Action string
	// Runtime, when set, is the target instead of Org and Workspace; its
	// zero value stands for a runtime that does not exist, refused
	// exactly as one the principal may not see.
	Runtime *store.Runtime
}

// RuntimeTarget is the target rt.
func RuntimeTarget(rt store.Runtime) Target { return Target{Runtime: &rt} }

// Scope is what Authorize resolved: the org and what the principal may do
// there, and the workspace (zero org-wide).
type Scope struct {
	Access    auth.Access
	Workspace store.Workspace
}

var errInstallationOnly = errdefs.PermissionDenied("installation_admin_only", "only the installation admin may do this")

// ErrRuntimeNotFound answers a runtime that does not exist and one the
// principal may not see alike, naming neither.
var ErrRuntimeNotFound = errdefs.NotFound("runtime_not_found", "no runtime you may see has this address")

// Authorize decides whether p may do what needs need at t, in this
// order, so that nothing is learnt that should not be:
//
//  1. public and any actions need nothing more (the door authenticated),
//     and act nowhere in particular: asked of an org, a workspace or a
//     runtime, they are the caller's mistake (an error), never a pass;
//  2. installation actions outside an org need the installation admin;
//  3. the org, and the workspace, that p may not see are not found
//     (404), exactly as those that do not exist;
//  4. a key narrowed to a workspace is kept to its workspace's targets
//     (403), unless the target is Narrow;
//  5. the role need names, in that org (403).
//
// A refusal is a public error; one of a runtime carries an auth.Refusal
// naming why, for the door's log.
func (s *Service) Authorize(ctx context.Context, p Principal, need Need, t Target) (Scope, error) {
	switch {
	case need == Public || need == Any:
		if t.Runtime != nil || t.Org != "" || t.Workspace != "" {
			return Scope{}, fmt.Errorf("access: %s asked at an org, a workspace or a runtime, where only a role is", need)
		}
		return Scope{}, nil
	case t.Runtime != nil:
		return s.authorizeRuntime(ctx, p, need, *t.Runtime)
	case t.Org == "":
		if need != Installation {
			return Scope{}, fmt.Errorf("access: %s outside an org: only installation actions are", need)
		}
		if !p.Installation {
			return Scope{}, errInstallationOnly
		}
		return Scope{}, nil
	}
	sc, err := s.resolve(ctx, p, t)
	if err != nil {
		return sc, err
	}
	if need == Installation {
		if !p.Installation {
			return Scope{}, errInstallationOnly
		}
		return sc, nil
	}
	if !auth.Role(need).Valid() {
		return Scope{}, fmt.Errorf("access: %q is not a need", need)
	}
	if !sc.Access.Role.AtLeast(auth.Role(need)) {
		return Scope{}, errdefs.PermissionDenied("role_too_low", "this needs the %s role in org %q; the caller has %s", need, sc.Access.Org.Name, sc.Access.Role)
	}
	return sc, nil
}

// resolve finds t's org and workspace as p sees them.
func (s *Service) resolve(ctx context.Context, p Principal, t Target) (Scope, error) {
	if !tenancy.NameRE.MatchString(t.Org) {
		return Scope{}, errdefs.InvalidArgument("invalid_org", "%q is not an org name", t.Org)
	}
	o, err := s.store.GetOrgByName(ctx, t.Org)
	if err != nil && !errdefs.IsNotFound(err) {
		return Scope{}, err
	}
	var acc auth.Access
	why := "org_not_found"
	if err == nil {
		if acc, why, err = s.orgAccess(ctx, p, o); err != nil {
			return Scope{}, err
		}
	}
	if why != "" {
		return Scope{}, errdefs.NotFound("org_not_found", "org %q not found", t.Org)
	}
	sc := Scope{Access: acc}
	switch {
	case t.Workspace != "":
		if !tenancy.NameRE.MatchString(t.Workspace) {
			return Scope{}, errdefs.InvalidArgument("invalid_workspace", "%q is not a workspace name", t.Workspace)
		}
		ws, err := s.store.GetWorkspaceByName(ctx, o.ID, t.Workspace)
		if err == nil && !acc.SeesWorkspace(ws.ID) {
			err = errdefs.ErrNotFound
		}
		if errdefs.IsNotFound(err) {
			return Scope{}, errdefs.NotFound("workspace_not_found", "workspace %q not found in org %q", t.Workspace, o.Name)
		}
		if err != nil {
			return Scope{}, err
		}
		sc.Workspace = ws
	case p.WorkspaceID != "" && !t.Narrow:
		return Scope{}, errdefs.PermissionDenied("key_narrowed_to_workspace", "this key is narrowed to one workspace; %s is an org-wide route", t.Action)
	}
	return sc, nil
}

// authorizeRuntime decides whether p may do what needs need in rt: in
// sight of rt's workspace, with the role. A runtime that does not exist
// (rt zero) is looked up as far as another org's (its org, p's access to
// it), so that it answers no sooner, and is not found alike.
func (s *Service) authorizeRuntime(ctx context.Context, p Principal, need Need, rt store.Runtime) (Scope, error) {
	if !auth.Role(need).Valid() {
		return Scope{}, fmt.Errorf("access: a runtime needs a role, not %q", need)
	}
	o, err := s.store.GetOrg(ctx, rt.OrgID)
	if err != nil && !errdefs.IsNotFound(err) {
		return Scope{}, err
	}
	if rt.ID == "" {
		o = store.Org{ID: uuid.Nil.String()}
	} else if err != nil {
		return Scope{}, err
	}
	acc, why, err := s.orgAccess(ctx, p, o)
	if err != nil {
		return Scope{}, err
	}
	if why == "" && !acc.SeesWorkspace(rt.WorkspaceID) {
		why = "workspace_not_visible"
	}
	if rt.ID == "" {
		why = "unknown_runtime"
	}
	if why != "" {
		return Scope{}, ErrRuntimeNotFound.WithCause(&auth.Refusal{Reason: why})
	}
	if !acc.Role.AtLeast(auth.Role(need)) {
		return Scope{}, errdefs.PermissionDenied("role_too_low", "reaching a runtime needs the %s role; the caller has %s", need, acc.Role).
			WithCause(&auth.Refusal{Reason: "role_too_low"})
	}
	return Scope{Access: acc, Workspace: store.Workspace{ID: rt.WorkspaceID, OrgID: rt.OrgID}}, nil
}

// OrgAccess returns what p may do in org; ok is false when p may not see
// org at all (which answers 404, as if it did not exist).
func (s *Service) OrgAccess(ctx context.Context, p Principal, org store.Org) (acc auth.Access, ok bool, err error) {
	acc, why, err := s.orgAccess(ctx, p, org)
	return acc, why == "" && err == nil, err
}

// orgAccess is what p may do in org, or why it may not see org.
//
// The installation admin is an owner everywhere. A key is confined to its
// org, and to its workspace if narrowed; its role is its own, already
// lowered to its holder's (checkKey). A session, and an SSH key registered
// with one, has the user's memberships. Owners and admins see every
// workspace of their org; members and viewers only those they are members
// of.
func (s *Service) orgAccess(ctx context.Context, p Principal, org store.Org) (acc auth.Access, why string, err error) {
	acc = auth.Access{Org: org, Role: p.Role}
	switch {
	case p.Installation:
		acc.Role = auth.RoleOwner
		return acc, "", nil
	case p.SessionID != "":
		m, err := s.store.GetOrgMember(ctx, org.ID, p.UserID)
		if errdefs.IsNotFound(err) {
			return acc, "not_a_member", nil
		}
		if err != nil {
			return acc, "", err
		}
		acc.Role = auth.Role(m.Role)
	case p.OrgID != org.ID:
		return acc, "key_scoped_to_another_org", nil
	}
	if !acc.Role.Valid() {
		return acc, "not_a_member", nil
	}
	if p.UserID != "" && !acc.Role.AtLeast(auth.RoleAdmin) {
		ws, err := s.store.ListMemberWorkspaces(ctx, org.ID, p.UserID)
		if err != nil {
			return acc, "", err
		}
		acc.Workspaces = ws
		if acc.Workspaces == nil {
			acc.Workspaces = []string{}
		}
	}
	if p.WorkspaceID != "" {
		if acc.SeesWorkspace(p.WorkspaceID) {
			acc.Workspaces = []string{p.WorkspaceID}
		} else {
			acc.Workspaces = []string{}
		}
	}
	return acc, "", nil
}
