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
		SizeBytes: s.SizeBytes, CreatedAt: fromMicro(s.CreatedAt), BilledUntil: fromMicro(s.BilledUntil)}, err
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

// ListSnapshotsAfter lists snapshots of every org by id after afterID.
func (q *queries) ListSnapshotsAfter(ctx context.Context, afterID string, limit int) ([]store.Snapshot, error) {
	rows, err := q.rq.ListSnapshotsAfter(ctx, litedb.ListSnapshotsAfterParams{AfterID: afterID, Lim: int64(min(max(limit, 1), store.MaxLimit*10))})
	if err != nil {
		return nil, classify("list snapshots to bill", resSnapshot, err)
	}
	return mapRows(rows, toSnapshot)
}

// ChargeSnapshotStorage charges a snapshot's storage and moves its
// watermark, the balance and the journal together.
func (q *queries) ChargeSnapshotStorage(ctx context.Context, c store.SnapshotCharge) (store.JournalEntry, error) {
	if err := dialect.CheckSnapshotCharge(c); err != nil {
		return store.JournalEntry{}, err
	}
	at := orNow(c.At)
	var e store.JournalEntry
	err := q.atomic(ctx, func(q *queries) error {
		row, err := q.wq.GetSnapshotForUpdate(ctx, c.SnapshotID)
		if err != nil {
			return classify("read snapshot", resSnapshot, err)
		}
		s, err := toSnapshot(row)
		if err != nil {
			return err
		}
		if err := dialect.SnapshotWatermark(s, c); err != nil {
			return err
		}
		a, err := q.openAccount(ctx, c.OrgID, at)
		if err != nil {
			return err
		}
		e = dialect.SnapshotChargeEntry(a, s, c, at)
		if err := q.appendEntry(ctx, &e); err != nil {
			return err
		}
		n, err := q.wq.SetSnapshotBilledUntil(ctx, litedb.SetSnapshotBilledUntilParams{UpTo: micros(c.UpTo), ID: s.ID, FromAt: micros(s.BilledUntil)})
		if err != nil {
			return classify("charge snapshot", resSnapshot, err)
		}
		if err := oneRow(n, "snapshot "+s.ID); err != nil {
			return err
		}
		return q.writeAccount(ctx, a, e.BalanceAfterMicros, e.HeldAfterMicros, at)
	})
	if err != nil {
		return store.JournalEntry{}, err
	}
	return dialect.NormEntry(e), nil
}

// DeleteSnapshot deletes the snapshot id.
func (q *queries) DeleteSnapshot(ctx context.Context, id string) error {
	n, err := q.wq.DeleteSnapshot(ctx, id)
	return affected("delete snapshot", resSnapshot, n, err)
}
