package store

import (
	"context"
	"encoding/json"
	"time"
)

// Workflow run statuses. pending waits for the replica that runs
// workflows; running has begun its steps; the others are final.
const (
	WorkflowPending   = "pending"
	WorkflowRunning   = "running"
	WorkflowSucceeded = "succeeded" // every step succeeded, or failed with continue_on_error
	WorkflowFailed    = "failed"    // a step failed
	WorkflowCancelled = "cancelled" // a caller cancelled it
)

// WorkflowFinal reports whether a run in status is done.
func WorkflowFinal(status string) bool {
	return status != WorkflowPending && status != WorkflowRunning
}

// Workflow is a named sequence of steps run on a runtime, and its
// schedule. Its definition (Spec) is a versioned JSON document of the
// workflow service's own (internal/workflow); the store keeps it as it is.
type Workflow struct {
	ID          string
	OrgID       string
	WorkspaceID string
	RuntimeID   string
	Name        string
	Spec        json.RawMessage
	// NextRunAt is when its schedule starts its next run; zero: never.
	NextRunAt time.Time
	CreatedAt time.Time
}

// WorkflowRun is one run of a workflow: its status, and each step's state
// in State (a versioned JSON document of internal/workflow).
type WorkflowRun struct {
	ID          string
	WorkflowID  string
	OrgID       string
	WorkspaceID string
	Status      string
	State       json.RawMessage
	// Version is the run's as read (1 when made); each write that lands
	// moves it on by one.
	Version   int64
	CreatedAt time.Time
}

// WorkflowQueries keep workflows and their runs (migration 0021).
type WorkflowQueries interface {
	// CreateWorkflow inserts w.
	CreateWorkflow(ctx context.Context, w Workflow) error
	// GetWorkflow returns the workflow id, ErrNotFound when there is none.
	GetWorkflow(ctx context.Context, id string) (Workflow, error)
	// ListWorkflows lists a runtime's workflows, oldest first.
	ListWorkflows(ctx context.Context, runtimeID string, page Page) ([]Workflow, string, error)
	// DeleteWorkflow deletes the workflow id and its runs.
	DeleteWorkflow(ctx context.Context, id string) error
	// SetWorkflowNextRun moves the workflow's next run from from to next
	// (zero: none) when it is still from, and reports whether it was.
	SetWorkflowNextRun(ctx context.Context, id string, from, next time.Time) (bool, error)
	// ListDueWorkflows lists the workflows whose next run is at or
	// before at, soonest first.
	ListDueWorkflows(ctx context.Context, at time.Time) ([]Workflow, error)

	// CreateWorkflowRun inserts r.
	CreateWorkflowRun(ctx context.Context, r WorkflowRun) error
	// GetWorkflowRun returns the run id, ErrNotFound when there is none.
	GetWorkflowRun(ctx context.Context, id string) (WorkflowRun, error)
	// ListWorkflowRuns lists a workflow's runs, newest first.
	ListWorkflowRuns(ctx context.Context, workflowID string, page Page) ([]WorkflowRun, string, error)
	// UpdateWorkflowRun writes r's status and state when the stored run
	// is still in status from at r.Version, moving its version on, and
	// reports whether it was.
	UpdateWorkflowRun(ctx context.Context, r WorkflowRun, from string) (bool, error)
	// ListUnfinishedWorkflowRuns lists every pending or running run of
	// the installation, oldest first.
	ListUnfinishedWorkflowRuns(ctx context.Context) ([]WorkflowRun, error)
}
