package client

import (
	"context"
	"net/http"
)

// CreateSnapshot takes a snapshot of a runtime: its workspace files and
// its configuration.
func (c *Client) CreateSnapshot(ctx context.Context, org, ws, runtimeID string, req CreateSnapshotRequest) (Snapshot, error) {
	return call[Snapshot](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "snapshots"), nil, req)
}

// ListRuntimeSnapshots lists one page of the snapshots taken of a runtime.
func (c *Client) ListRuntimeSnapshots(ctx context.Context, org, ws, runtimeID string, opts ListOptions) (List[Snapshot], error) {
	return call[List[Snapshot]](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "snapshots"), opts.query(), nil)
}

// ListSnapshots lists one page of the snapshots of org/ws.
func (c *Client) ListSnapshots(ctx context.Context, org, ws string, opts ListOptions) (List[Snapshot], error) {
	return call[List[Snapshot]](ctx, c, http.MethodGet, wsRoute(org, ws, "snapshots"), opts.query(), nil)
}

// GetSnapshot returns a snapshot of org/ws.
func (c *Client) GetSnapshot(ctx context.Context, org, ws, snapshotID string) (Snapshot, error) {
	return call[Snapshot](ctx, c, http.MethodGet, wsRoute(org, ws, "snapshots", snapshotID), nil, nil)
}

// DeleteSnapshot deletes a snapshot of org/ws and its artifact.
func (c *Client) DeleteSnapshot(ctx context.Context, org, ws, snapshotID string) error {
	return c.callDiscard(ctx, http.MethodDelete, wsRoute(org, ws, "snapshots", snapshotID), nil, nil)
}

// RestoreSnapshot restores a snapshot into a runtime of org/ws or into a
// new project (req names which).
func (c *Client) RestoreSnapshot(ctx context.Context, org, ws, snapshotID string, req RestoreSnapshotRequest) (RestoreSnapshotResult, error) {
	return call[RestoreSnapshotResult](ctx, c, http.MethodPost, wsRoute(org, ws, "snapshots", snapshotID, "restore"), nil, req)
}
