package postgres

import (
	"context"
	"fmt"
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
		SizeBytes: s.SizeBytes, CreatedAt: s.CreatedAt.UTC(), BilledUntil: s.BilledUntil.UTC()}
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

// ListSnapshotsAfter lists snapshots of every org by id after afterID.
func (q *queries) ListSnapshotsAfter(ctx context.Context, afterID string, limit int) ([]store.Snapshot, error) {
	rows, err := q.q.ListSnapshotsAfter(ctx, pgdb.ListSnapshotsAfterParams{AfterID: afterID, Lim: int32(min(max(limit, 1), store.MaxLimit*10))})
	return mapRows(rows, toSnapshot), classify("list snapshots to bill", resSnapshot, err)
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
		row, err := q.q.GetSnapshotForUpdate(ctx, c.SnapshotID)
		if err != nil {
			return classify("read snapshot", resSnapshot, err)
		}
		s := toSnapshot(row)
		if err := dialect.SnapshotWatermark(s, c); err != nil {
			return err
		}
		a, err := q.openAccount(ctx, c.OrgID, at)
		if err != nil {
			return err
		}
		e = dialect.SnapshotChargeEntry(a, s, c, at)
		if err := q.appendEntries(ctx, []*store.JournalEntry{&e}); err != nil {
			return err
		}
		n, err := q.q.SetSnapshotBilledUntil(ctx, pgdb.SetSnapshotBilledUntilParams{UpTo: c.UpTo, ID: s.ID, FromAt: row.BilledUntil})
		if err != nil {
			return classify("charge snapshot", resSnapshot, err)
		}
		if n != 1 {
			return fmt.Errorf("postgres store: the locked snapshot %s changed (%d rows matched)", s.ID, n)
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
	n, err := q.q.DeleteSnapshot(ctx, id)
	return affected("delete snapshot", resSnapshot, n, err)
}
