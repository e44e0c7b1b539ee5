package sqlite

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Snapshots (migration 0018).

const resSnapshot = dialect.Snapshot

func toSnapshot(s litedb.Snapshot) (store.Snapshot, error) {
	c, err := dialect.SnapshotConfig(s.Config)
	return store.Snapshot{ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, RuntimeID: s.RuntimeID, Name: s.Name,
		Provider: s.Provider, Image: s.Image, Config: c, Destination: s.Destination, Location: s.Location,
		SizeBytes: s.SizeBytes, CreatedAt: fromMicro(s.CreatedAt)}, err
}

// CreateSnapshot inserts s; its name is unique in its workspace.
func (q *queries) CreateSnapshot(ctx context.Context, s store.Snapshot) error {
	config, err := dialect.CheckSnapshot(s)
	if err != nil {
		return err
	}
	err = classify("create snapshot", resSnapshot, q.wq.CreateSnapshot(ctx, litedb.CreateSnapshotParams{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, RuntimeID: s.RuntimeID, Name: s.Name,
		Provider: s.Provider, Image: s.Image, Config: config, Destination: s.Destination, Location: s.Location,
		SizeBytes: s.SizeBytes, CreatedAt: micros(orNow(s.CreatedAt)),
	}))
	if errdefs.IsConflict(err) {
		return dialect.SnapshotExists(err)
	}
	return err
}

// GetSnapshot returns the snapshot id.
func (q *queries) GetSnapshot(ctx context.Context, id string) (store.Snapshot, error) {
	s, err := q.rq.GetSnapshot(ctx, id)
	if err != nil {
		return store.Snapshot{}, classify("get snapshot", resSnapshot, err)
	}
	return toSnapshot(s)
}

// ListSnapshots lists workspaceID's snapshots (runtimeID's only, unless
// "") in creation order.
func (q *queries) ListSnapshots(ctx context.Context, workspaceID, runtimeID string, page store.Page) ([]store.Snapshot, string, error) {
	return listPage(ctx, "list snapshots", resSnapshot, page,
		func(ctx context.Context, k keyset) ([]litedb.Snapshot, error) {
			return q.rq.ListSnapshots(ctx, litedb.ListSnapshotsParams{WorkspaceID: workspaceID, RuntimeID: runtimeID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toSnapshot, func(s store.Snapshot) (time.Time, string) { return s.CreatedAt, s.ID })
}

// ListOrgSnapshots lists orgID's snapshots in creation order.
func (q *queries) ListOrgSnapshots(ctx context.Context, orgID string) ([]store.Snapshot, error) {
	rows, err := q.rq.ListOrgSnapshots(ctx, orgID)
	if err != nil {
		return nil, classify("list org snapshots", resSnapshot, err)
	}
	return mapRows(rows, toSnapshot)
}

// DeleteSnapshot deletes the snapshot id.
func (q *queries) DeleteSnapshot(ctx context.Context, id string) error {
	n, err := q.wq.DeleteSnapshot(ctx, id)
	return affected("delete snapshot", resSnapshot, n, err)
}
