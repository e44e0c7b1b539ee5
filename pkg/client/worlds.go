package client

import (
	"context"
	"net/http"
)

// World statuses.
const (
	WorldStarting = "starting"
	WorldRunning  = "running"
	WorldPaused   = "paused"
	WorldDeleting = "deleting"
	WorldDeleted  = "deleted"
	WorldFailed   = "failed"
)

// CreateWorld starts a world in org/ws: every member's sandbox on one
// private network. It answers once every member runs.
func (c *Client) CreateWorld(ctx context.Context, org, ws string, req CreateWorldRequest) (World, error) {
	return call[World](ctx, c, http.MethodPost, wsRoute(org, ws, "worlds"), nil, req)
}

// ListWorlds lists one page of org/ws's worlds, oldest first.
func (c *Client) ListWorlds(ctx context.Context, org, ws string, opts ListOptions) (List[World], error) {
	return call[List[World]](ctx, c, http.MethodGet, wsRoute(org, ws, "worlds"), opts.query(), nil)
}

// GetWorld returns a world with its members' ledger rows and its cost.
func (c *Client) GetWorld(ctx context.Context, org, ws, id string) (World, error) {
	return call[World](ctx, c, http.MethodGet, wsRoute(org, ws, "worlds", id), nil, nil)
}

// DeleteWorld tears a world down and returns it, deleted.
func (c *Client) DeleteWorld(ctx context.Context, org, ws, id string) (World, error) {
	return call[World](ctx, c, http.MethodDelete, wsRoute(org, ws, "worlds", id), nil, nil)
}

// PauseWorld pauses every member of a world.
func (c *Client) PauseWorld(ctx context.Context, org, ws, id string) (World, error) {
	return call[World](ctx, c, http.MethodPost, wsRoute(org, ws, "worlds", id, "pause"), nil, nil)
}

// ResumeWorld resumes every member of a world.
func (c *Client) ResumeWorld(ctx context.Context, org, ws, id string) (World, error) {
	return call[World](ctx, c, http.MethodPost, wsRoute(org, ws, "worlds", id, "resume"), nil, nil)
}

// ExecWorldMember runs a process in member of a running world and
// returns its collected output and exit.
func (c *Client) ExecWorldMember(ctx context.Context, org, ws, id, member string, req ExecRequest) (ExecResult, error) {
	return call[ExecResult](ctx, c, http.MethodPost, wsRoute(org, ws, "worlds", id, "members", member, "exec"), nil, req)
}
