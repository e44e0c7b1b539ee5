package client

import (
	"context"
	"net/http"
)

func runtimeRoute(org, ws, runtimeID string, action ...string) route {
	return wsRoute(org, ws, append([]string{"runtimes", runtimeID}, action...)...)
}

// ListRuntimes lists one page of the runtimes in org/ws.
func (c *Client) ListRuntimes(ctx context.Context, org, ws string, opts ListOptions) (List[Runtime], error) {
	return call[List[Runtime]](ctx, c, http.MethodGet, wsRoute(org, ws, "runtimes"), opts.query(), nil)
}

// GetRuntime returns a runtime of org/ws.
func (c *Client) GetRuntime(ctx context.Context, org, ws, runtimeID string) (Runtime, error) {
	return call[Runtime](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID), nil, nil)
}

// ConfigureRuntime changes some of a runtime's settings. The answer says
// which changes apply at once and which when the runtime next starts.
func (c *Client) ConfigureRuntime(ctx context.Context, org, ws, runtimeID string, patch RuntimePatch) (RuntimeUpdate, error) {
	return call[RuntimeUpdate](ctx, c, http.MethodPatch, runtimeRoute(org, ws, runtimeID), nil, patch)
}

// ListEgress lists the egress proxy's decisions about a runtime's traffic,
// newest first.
func (c *Client) ListEgress(ctx context.Context, org, ws, runtimeID string, opts ListOptions) (List[EgressDecision], error) {
	return call[List[EgressDecision]](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "egress"), opts.query(), nil)
}

// StartRuntime provisions a sandbox for the runtime, injecting the secrets
// named in req. A runtime that already runs answers a conflict with code
// "runtime_already_running".
func (c *Client) StartRuntime(ctx context.Context, org, ws, runtimeID string, req StartRuntimeRequest) (Runtime, error) {
	return call[Runtime](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "start"), nil, req)
}

// PauseRuntime suspends the runtime's sandbox, keeping its state.
func (c *Client) PauseRuntime(ctx context.Context, org, ws, runtimeID string) (Runtime, error) {
	return call[Runtime](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "pause"), nil, nil)
}

// ResumeRuntime resumes a paused runtime.
func (c *Client) ResumeRuntime(ctx context.Context, org, ws, runtimeID string) (Runtime, error) {
	return call[Runtime](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "resume"), nil, nil)
}

// ResetRuntime terminates the runtime's sandbox and returns it to idle.
func (c *Client) ResetRuntime(ctx context.Context, org, ws, runtimeID string, req ResetRequest) (Runtime, error) {
	return call[Runtime](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "reset"), nil, req)
}

// KeepaliveRuntime extends the expiry window of the runtime's sandbox.
func (c *Client) KeepaliveRuntime(ctx context.Context, org, ws, runtimeID string, req KeepaliveRequest) (Runtime, error) {
	return call[Runtime](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "keepalive"), nil, req)
}
