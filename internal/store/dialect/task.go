package dialect

import (
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Task names the tasks' records.
const Task Resource = "task"

// CheckTask validates a task to be stored: its ids, status and documents.
func CheckTask(t store.Task) error {
	if err := Required(Task, "id", t.ID, "org id", t.OrgID, "workspace id", t.WorkspaceID, "status", t.Status); err != nil {
		return err
	}
	if len(t.Spec) == 0 || len(t.Result) == 0 {
		return errdefs.InvalidArgument("invalid_task", "a task needs its spec and result documents")
	}
	return nil
}
