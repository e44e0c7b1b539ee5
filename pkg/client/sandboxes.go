package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

func (f SandboxFilter) query() url.Values {
	return queryOf(map[string]string{
		"kind": f.Kind, "state": f.State, "provider": f.Provider,
		"runtime_id": f.RuntimeID, "cursor": f.Cursor,
	}, f.Limit)
}

// ListSandboxes lists one page of org's sandbox ledger, newest first,
// narrowed by f.
func (c *Client) ListSandboxes(ctx context.Context, org string, f SandboxFilter) (List[Sandbox], error) {
	return call[List[Sandbox]](ctx, c, http.MethodGet, orgRoute(org, "sandboxes"), f.query(), nil)
}

// GetSandbox returns a sandbox of org by our id or the provider's sandbox
// id.
func (c *Client) GetSandbox(ctx context.Context, org, sandbox string) (Sandbox, error) {
	return call[Sandbox](ctx, c, http.MethodGet, orgRoute(org, "sandboxes", sandbox), nil, nil)
}

// SandboxLogs returns a sandbox's lifecycle and the last tail lines its
// agent wrote (tail 0: the server's default), given by our id or the
// provider's sandbox id.
func (c *Client) SandboxLogs(ctx context.Context, org, sandbox string, tail int) (SandboxLogs, error) {
	q := url.Values{}
	if tail > 0 {
		q.Set("tail", strconv.Itoa(tail))
	}
	return call[SandboxLogs](ctx, c, http.MethodGet, orgRoute(org, "sandboxes", sandbox, "logs"), q, nil)
}

// KillSandbox kills a sandbox of org, given by our id or the provider's
// sandbox id, and returns its final ledger row.
func (c *Client) KillSandbox(ctx context.Context, org, sandbox string) (Sandbox, error) {
	return call[Sandbox](ctx, c, http.MethodDelete, orgRoute(org, "sandboxes", sandbox), nil, nil)
}

// SandboxFilter narrows a ledger listing. Empty fields match everything.
type SandboxFilter struct {
	Kind      string
	State     string
	Provider  string
	RuntimeID string
	Cursor    string
	Limit     int
}
