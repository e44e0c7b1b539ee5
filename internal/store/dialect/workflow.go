package dialect

import (
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Workflow and WorkflowRun name workflows' records and their runs'.
const (
	Workflow    Resource = "workflow"
	WorkflowRun Resource = "workflow_run"
)

// CheckWorkflow validates a workflow to be stored.
func CheckWorkflow(w store.Workflow) error {
	if err := Required(Workflow, "id", w.ID, "org id", w.OrgID, "workspace id", w.WorkspaceID,
		"runtime id", w.RuntimeID, "name", w.Name); err != nil {
		return err
	}
	if len(w.Spec) == 0 {
		return errdefs.InvalidArgument("invalid_workflow", "a workflow needs its spec document")
	}
	return nil
}

// CheckWorkflowRun validates a workflow run to be stored.
func CheckWorkflowRun(r store.WorkflowRun) error {
	if err := Required(WorkflowRun, "id", r.ID, "workflow id", r.WorkflowID, "org id", r.OrgID,
		"workspace id", r.WorkspaceID, "status", r.Status); err != nil {
		return err
	}
	if len(r.State) == 0 {
		return errdefs.InvalidArgument("invalid_workflow", "a workflow run needs its state document")
	}
	return nil
}
