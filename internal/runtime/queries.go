package runtime

import (
	"context"
	"regexp"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Stable public error codes of looking runtimes and sandboxes up.
const (
	CodeSandboxNotFound  = "sandbox_not_found"
	CodeInvalidSandboxID = "invalid_sandbox_id"
)

// providerIDRE is the shape of a provider's sandbox id.
var providerIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// Runtimes lists a workspace's runtimes, a page at a time.
func (s *Service) Runtimes(ctx context.Context, workspaceID string, page store.Page) ([]store.Runtime, string, error) {
	return s.store.ListRuntimes(ctx, workspaceID, page)
}

// RuntimeIDOf is the id of a project's runtime; "" when it has none.
func (s *Service) RuntimeIDOf(ctx context.Context, projectID string) (string, error) {
	rt, err := s.store.GetRuntimeByProject(ctx, projectID)
	if errdefs.IsNotFound(err) {
		return "", nil
	}
	return rt.ID, err
}

// CurrentSandbox is the ledger row of the runtime's current sandbox; nil
// when it has none, or its row is gone.
func (s *Service) CurrentSandbox(ctx context.Context, rt store.Runtime) (*store.Sandbox, error) {
	if rt.CurrentSandboxID == "" {
		return nil, nil
	}
	sb, err := s.store.GetSandbox(ctx, rt.CurrentSandboxID)
	if errdefs.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &sb, nil
}

// Egress lists the egress proxy's decisions about a runtime's traffic,
// newest first.
func (s *Service) Egress(ctx context.Context, runtimeID string, page store.Page) ([]store.EgressDecision, string, error) {
	return s.store.ListEgress(ctx, runtimeID, page)
}

// Sandboxes lists an org's ledger rows that f keeps, newest first.
func (s *Service) Sandboxes(ctx context.Context, f store.SandboxFilter, page store.Page) ([]store.Sandbox, string, error) {
	return s.store.ListSandboxes(ctx, f, page)
}

// Sandbox finds a ledger row of an org by key, our UUID or the provider's
// sandbox id, that sees (the workspaces the caller may see) accepts: 400
// invalid_sandbox_id when key is neither, 404 sandbox_not_found when no
// such row is there to see.
func (s *Service) Sandbox(ctx context.Context, orgID, key string, sees func(workspaceID string) bool) (store.Sandbox, error) {
	var sb store.Sandbox
	var err error
	switch {
	case store.IsID(key):
		sb, err = s.store.GetSandbox(ctx, key)
		if errdefs.IsNotFound(err) {
			sb, err = s.store.GetSandboxByProviderID(ctx, orgID, key)
		}
	case providerIDRE.MatchString(key):
		sb, err = s.store.GetSandboxByProviderID(ctx, orgID, key)
	default:
		return sb, errdefs.InvalidArgument(CodeInvalidSandboxID, "%q is neither a sandbox id nor a provider sandbox id", key)
	}
	if err == nil && (sb.OrgID != orgID || !sees(sb.WorkspaceID)) {
		err = errdefs.ErrNotFound
	}
	if errdefs.IsNotFound(err) {
		return sb, errdefs.NotFound(CodeSandboxNotFound, "sandbox %q not found", key)
	}
	return sb, err
}

// ProvisionsSeen are the provisions of runtimes in workspaces the caller
// sees. seen answers, once per org, which of its workspaces the caller
// sees (nil: none). Warm sandboxes belong to no org and are left out, as
// are provisions of runtimes since deleted.
func (s *Service) ProvisionsSeen(ctx context.Context, seen func(ctx context.Context, orgID string) (func(workspaceID string) bool, error)) ([]Provision, error) {
	orgs := map[string]func(string) bool{}
	var out []Provision
	for _, p := range s.Provisions() {
		if p.OrgID == "" || p.RuntimeID == "" {
			continue
		}
		sees, ok := orgs[p.OrgID]
		if !ok {
			var err error
			if sees, err = seen(ctx, p.OrgID); err != nil {
				return nil, err
			}
			orgs[p.OrgID] = sees
		}
		if sees == nil {
			continue
		}
		rt, err := s.store.GetRuntime(ctx, p.RuntimeID)
		if errdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if sees(rt.WorkspaceID) {
			out = append(out, p)
		}
	}
	return out, nil
}
