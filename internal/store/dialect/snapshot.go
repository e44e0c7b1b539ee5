package dialect

import (
	"encoding/json"
	"fmt"

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
