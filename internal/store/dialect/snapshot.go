package dialect

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Snapshot names snapshots' records.
const Snapshot Resource = "snapshot"

// CheckSnapshot validates a new snapshot and encodes its configuration.
func CheckSnapshot(s store.Snapshot) (config string, err error) {
	if err := Required(Snapshot, "id", s.ID, "org id", s.OrgID, "workspace id", s.WorkspaceID,
		"runtime id", s.RuntimeID, "name", s.Name, "destination", s.Destination, "location", s.Location); err != nil {
		return "", err
	}
	if s.SizeBytes < 0 {
		return "", errdefs.InvalidArgument("invalid_snapshot", "a snapshot's size is not negative")
	}
	b, err := json.Marshal(s.Config)
	if err != nil {
		return "", fmt.Errorf("encode snapshot config: %w", err)
	}
	return string(b), nil
}

// SnapshotConfig decodes a stored snapshot's configuration.
func SnapshotConfig(stored string) (store.RuntimeConfig, error) {
	var c store.RuntimeConfig
	if err := json.Unmarshal([]byte(stored), &c); err != nil {
		return c, fmt.Errorf("decode snapshot config: %w", err)
	}
	return c, nil
}

// SnapshotExists is the refusal of a snapshot name taken in its workspace.
func SnapshotExists(cause error) error {
	return errdefs.Conflict("snapshot_exists", "a snapshot of this name exists in the workspace").WithCause(cause)
}

// CheckSnapshotCharge validates a storage charge.
func CheckSnapshotCharge(c store.SnapshotCharge) error {
	if err := Required(Snapshot, "org id", c.OrgID, "snapshot id", c.SnapshotID); err != nil {
		return err
	}
	if c.AmountMicros <= 0 || !c.UpTo.After(c.From) {
		return errdefs.InvalidArgument("invalid_settlement", "a storage charge is positive, over a period that ends after it begins")
	}
	return nil
}

// SnapshotWatermark refuses a charge from another watermark than the
// snapshot's.
func SnapshotWatermark(s store.Snapshot, c store.SnapshotCharge) error {
	if s.OrgID != c.OrgID {
		return NotFound(Snapshot, nil)
	}
	if s.BilledUntil.Equal(c.From.Truncate(time.Microsecond)) {
		return nil
	}
	return errdefs.Conflict("settlement_stale", "snapshot %s was charged up to %s, not %s; read it again", s.ID, s.BilledUntil, c.From)
}

// SnapshotChargeEntry is the journal entry of charge c of snapshot s on
// account a at at.
func SnapshotChargeEntry(a store.CreditAccount, s store.Snapshot, c store.SnapshotCharge, at time.Time) store.JournalEntry {
	e := SettlementEntry(a, store.Sandbox{RuntimeID: s.RuntimeID, WorkspaceID: s.WorkspaceID}, store.Settlement{
		OrgID: c.OrgID, From: c.From, UpTo: c.UpTo, AmountMicros: c.AmountMicros,
		IdempotencyKey: fmt.Sprintf("snapshot:%s:%d", s.ID, c.From.UnixMicro()),
		Note:           "snapshot storage: " + s.Name + " (" + s.ID + ")",
	}, at)
	return e
}
