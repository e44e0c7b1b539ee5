package postgres

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Snapshots (migration 0018).

const resSnapshot = dialect.Snapshot

// toSnapshot converts a row; a configuration this dialect wrote always
// decodes, so a row that does not keeps an empty one.
func toSnapshot(s pgdb.Snapshot) store.Snapshot {
	c, _ := dialect.SnapshotConfig(s.Config)
	return store.Snapshot{ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, RuntimeID: s.RuntimeID, Name: s.Name,
		Provider: s.Provider, Image: s.Image, Config: c, Destination: s.Destination, Location: s.Location,
		SizeBytes: s.SizeBytes, CreatedAt: s.CreatedAt.UTC()}
}

// CreateSnapshot inserts s; its name is unique in its workspace.
func (q *queries) CreateSnapshot(ctx context.Context, s store.Snapshot) error {
	config, err := dialect.CheckSnapshot(s)
	if err != nil {
		return err
	}
	err = classify("create snapshot", resSnapshot, q.q.CreateSnapshot(ctx, pgdb.CreateSnapshotParams{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, RuntimeID: s.RuntimeID, Name: s.Name,
		Provider: s.Provider, Image: s.Image, Config: config, Destination: s.Destination, Location: s.Location,
		SizeBytes: s.SizeBytes, CreatedAt: orNow(s.CreatedAt),
	}))
	if errdefs.IsConflict(err) {
		return dialect.SnapshotExists(err)
	}
	return err
}

// GetSnapshot returns the snapshot id.
func (q *queries) GetSnapshot(ctx context.Context, id string) (store.Snapshot, error) {
	s, err := q.q.GetSnapshot(ctx, id)
	return toSnapshot(s), classify("get snapshot", resSnapshot, err)
}

// ListSnapshots lists workspaceID's snapshots (runtimeID's only, unless
// "") in creation order.
func (q *queries) ListSnapshots(ctx context.Context, workspaceID, runtimeID string, page store.Page) ([]store.Snapshot, string, error) {
	return listPage(ctx, "list snapshots", resSnapshot, page,
		func(ctx context.Context, k keyset) ([]pgdb.Snapshot, error) {
			return q.q.ListSnapshots(ctx, pgdb.ListSnapshotsParams{WorkspaceID: workspaceID, RuntimeID: runtimeID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toSnapshot, func(s store.Snapshot) (time.Time, string) { return s.CreatedAt, s.ID })
}

// ListOrgSnapshots lists orgID's snapshots in creation order.
func (q *queries) ListOrgSnapshots(ctx context.Context, orgID string) ([]store.Snapshot, error) {
	rows, err := q.q.ListOrgSnapshots(ctx, orgID)
	return mapRows(rows, toSnapshot), classify("list org snapshots", resSnapshot, err)
}

// DeleteSnapshot deletes the snapshot id.
func (q *queries) DeleteSnapshot(ctx context.Context, id string) error {
	n, err := q.q.DeleteSnapshot(ctx, id)
	return affected("delete snapshot", resSnapshot, n, err)
}
