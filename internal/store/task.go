package store

import (
	"context"
	"encoding/json"
	"time"
)

// Task statuses. pending waits for its batch's turn; running has a
// sandbox; the others are final.
const (
	TaskPending   = "pending"
	TaskRunning   = "running"
	TaskSucceeded = "succeeded" // the command exited 0
	TaskFailed    = "failed"    // it exited non-zero, or could not run
	TaskTimedOut  = "timed_out" // its time limit passed first
	TaskCancelled = "cancelled" // a caller cancelled it
)

// TaskFinal reports whether a task in status is done.
func TaskFinal(status string) bool {
	return status != TaskPending && status != TaskRunning
}

// Task is one evaluation run: a command run in a sandbox of kind task
// made from a runtime's configuration, its exit, output and score. What
// it was asked to do (Spec) and what came of it (Result) are versioned
// JSON documents of the task service's own (internal/task); the store
// keeps them as they are.
type Task struct {
	ID          string
	OrgID       string
	WorkspaceID string
	BatchID     string // the batch it was made in; "" for none
	SandboxID   string // its ledger row; "" until it has one
	Status      string
	Spec        json.RawMessage
	Result      json.RawMessage
	CreatedAt   time.Time
	// Runner is the replica that runs it (its replica id), set when it is
	// made; "" for a task made before migration 0024 (unknown).
	Runner string
}

// TaskFilter narrows ListTasks: a workspace's tasks, or one batch's.
type TaskFilter struct {
	WorkspaceID string // required
	BatchID     string // "" for every batch
}

// TaskQueries keep tasks (migration 0017).
type TaskQueries interface {
	// CreateTask inserts t.
	CreateTask(ctx context.Context, t Task) error
	// GetTask returns the task id, ErrNotFound when there is none.
	GetTask(ctx context.Context, id string) (Task, error)
	// ListTasks lists tasks oldest first.
	ListTasks(ctx context.Context, f TaskFilter, page Page) ([]Task, string, error)
	// UpdateTask writes t's status, sandbox and result when the stored
	// task is still in status from, and reports whether it was.
	UpdateTask(ctx context.Context, t Task, from string) (bool, error)
	// ListUnfinishedTasks lists every pending or running task of the
	// installation, oldest first.
	ListUnfinishedTasks(ctx context.Context) ([]Task, error)
}
