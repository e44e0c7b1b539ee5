package client

import (
	"context"
	"net/http"
	"strconv"
)

// The runtime's secret bindings, one at a time.

// ListRuntimeSecrets returns the secrets bound to a runtime.
func (c *Client) ListRuntimeSecrets(ctx context.Context, org, ws, runtimeID string) (RuntimeSecrets, error) {
	return call[RuntimeSecrets](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "secrets"), nil, nil)
}

// BindRuntimeSecret binds a secret (id or name) to a runtime; it applies
// to the runtime's next sandbox when it has one now.
func (c *Client) BindRuntimeSecret(ctx context.Context, org, ws, runtimeID, secret string) (RuntimeUpdate, error) {
	return call[RuntimeUpdate](ctx, c, http.MethodPut, runtimeRoute(org, ws, runtimeID, "secrets", secret), nil, nil)
}

// UnbindRuntimeSecret unbinds a secret from a runtime ("secret_not_bound"
// when the runtime's config does not name it).
func (c *Client) UnbindRuntimeSecret(ctx context.Context, org, ws, runtimeID, secret string) (RuntimeUpdate, error) {
	return call[RuntimeUpdate](ctx, c, http.MethodDelete, runtimeRoute(org, ws, runtimeID, "secrets", secret), nil, nil)
}

// RuntimeSSH returns what connecting to a runtime over the SSH gateway
// takes: its address and host key, the user and the command.
func (c *Client) RuntimeSSH(ctx context.Context, org, ws, runtimeID string) (RuntimeSSH, error) {
	return call[RuntimeSSH](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "ssh"), nil, nil)
}

// Instance is a server in instance mode: the operations of its one
// runtime, under /api/sandbox, each the same as its runtime route's.
type Instance struct{ c *Client }

// Instance is c's server as one sandbox service instance.
func (c *Client) Instance() Instance { return Instance{c} }

// sandboxRoute is the route of the instance's operation named by rest.
func sandboxRoute(rest ...string) route { return routeOf("/api/sandbox", rest...) }

// Get returns the instance's runtime.
func (i Instance) Get(ctx context.Context) (Runtime, error) {
	return call[Runtime](ctx, i.c, http.MethodGet, sandboxRoute(), nil, nil)
}

// Start starts the instance's runtime.
func (i Instance) Start(ctx context.Context, req StartRuntimeRequest) (Runtime, error) {
	return call[Runtime](ctx, i.c, http.MethodPost, sandboxRoute("start"), nil, req)
}

// Exec runs a process in the instance's sandbox and waits for it.
func (i Instance) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	return call[ExecResult](ctx, i.c, http.MethodPost, sandboxRoute("exec"), nil, req)
}

// Prompt runs one turn of an agent harness in the instance's sandbox.
func (i Instance) Prompt(ctx context.Context, req PromptRequest) (PromptResult, error) {
	return call[PromptResult](ctx, i.c, http.MethodPost, sandboxRoute("prompt"), nil, req)
}

// Task runs a prompt to completion as a task in the instance's sandbox.
func (i Instance) Task(ctx context.Context, req PromptRequest) (PromptResult, error) {
	return call[PromptResult](ctx, i.c, http.MethodPost, sandboxRoute("task"), nil, req)
}

// Stop stops (pauses) the instance's sandbox, keeping its state.
func (i Instance) Stop(ctx context.Context) (Runtime, error) {
	return call[Runtime](ctx, i.c, http.MethodPost, sandboxRoute("stop"), nil, nil)
}

// Resume continues the instance's stopped sandbox.
func (i Instance) Resume(ctx context.Context) (Runtime, error) {
	return call[Runtime](ctx, i.c, http.MethodPost, sandboxRoute("resume"), nil, nil)
}

// Snapshot takes a snapshot of the instance's runtime.
func (i Instance) Snapshot(ctx context.Context, req CreateSnapshotRequest) (Snapshot, error) {
	return call[Snapshot](ctx, i.c, http.MethodPost, sandboxRoute("snapshot"), nil, req)
}

// ListSnapshots lists one page of the snapshots of the instance's runtime.
func (i Instance) ListSnapshots(ctx context.Context, opts ListOptions) (List[Snapshot], error) {
	return call[List[Snapshot]](ctx, i.c, http.MethodGet, sandboxRoute("snapshots"), opts.query(), nil)
}

// SSH returns what connecting to the instance's sandbox over the SSH
// gateway takes.
func (i Instance) SSH(ctx context.Context) (RuntimeSSH, error) {
	return call[RuntimeSSH](ctx, i.c, http.MethodGet, sandboxRoute("ssh"), nil, nil)
}

// ListSecrets returns the secrets bound to the instance's runtime.
func (i Instance) ListSecrets(ctx context.Context) (RuntimeSecrets, error) {
	return call[RuntimeSecrets](ctx, i.c, http.MethodGet, sandboxRoute("secrets"), nil, nil)
}

// BindSecret binds a secret to the instance's runtime.
func (i Instance) BindSecret(ctx context.Context, secret string) (RuntimeUpdate, error) {
	return call[RuntimeUpdate](ctx, i.c, http.MethodPut, sandboxRoute("secrets", secret), nil, nil)
}

// UnbindSecret unbinds a secret from the instance's runtime.
func (i Instance) UnbindSecret(ctx context.Context, secret string) (RuntimeUpdate, error) {
	return call[RuntimeUpdate](ctx, i.c, http.MethodDelete, sandboxRoute("secrets", secret), nil, nil)
}

// ListPorts lists the instance's sandbox's ports.
func (i Instance) ListPorts(ctx context.Context) (List[Port], error) {
	return call[List[Port]](ctx, i.c, http.MethodGet, sandboxRoute("previews"), nil, nil)
}

// SetPortPublic opens (public) or closes (private) a port of the
// instance's sandbox; its server is reached at PortPath.
func (i Instance) SetPortPublic(ctx context.Context, port int, public bool) (Port, error) {
	return call[Port](ctx, i.c, http.MethodPatch, sandboxRoute("previews", strconv.Itoa(port)), nil, SetPortRequest{Public: public})
}

// PortPath is the path of the instance's port proxy to port.
func (Instance) PortPath(port int) string { return "/api/sandbox/ports/" + strconv.Itoa(port) + "/" }
