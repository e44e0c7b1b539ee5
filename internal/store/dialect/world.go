package dialect

import (
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// World names the worlds' records.
const World Resource = "world"

// CheckWorld validates a world to be stored: its ids, status and spec.
func CheckWorld(w store.World) error {
	if err := Required(World, "id", w.ID, "org id", w.OrgID, "workspace id", w.WorkspaceID, "name", w.Name, "status", w.Status); err != nil {
		return err
	}
	if len(w.Spec) == 0 {
		return errdefs.InvalidArgument("invalid_world", "a world needs its spec document")
	}
	return nil
}
