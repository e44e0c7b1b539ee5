package client

import (
	"context"
	"net/http"
)

// Task statuses (Task.Status).
const (
	TaskPending   = "pending"
	TaskRunning   = "running"
	TaskSucceeded = "succeeded"
	TaskFailed    = "failed"
	TaskTimedOut  = "timed_out"
	TaskCancelled = "cancelled"
)

// TaskDone reports whether a task in status has ended.
func TaskDone(status string) bool { return status != TaskPending && status != TaskRunning }

// CreateTasks runs a batch of tasks in org/ws and returns it as recorded,
// its tasks pending.
func (c *Client) CreateTasks(ctx context.Context, org, ws string, req CreateTasksRequest) (TaskBatch, error) {
	return call[TaskBatch](ctx, c, http.MethodPost, wsRoute(org, ws, "tasks"), nil, req)
}

// ListTasks lists one page of org/ws's tasks, oldest first, or one
// batch's (batch "" for all).
func (c *Client) ListTasks(ctx context.Context, org, ws, batch string, opts ListOptions) (List[Task], error) {
	return call[List[Task]](ctx, c, http.MethodGet, wsRoute(org, ws, "tasks"),
		queryOf(map[string]string{"cursor": opts.Cursor, "batch_id": batch}, opts.Limit), nil)
}

// GetTask returns a task.
func (c *Client) GetTask(ctx context.Context, org, ws, id string) (Task, error) {
	return call[Task](ctx, c, http.MethodGet, wsRoute(org, ws, "tasks", id), nil, nil)
}

// CancelTask cancels a pending or running task and returns it.
func (c *Client) CancelTask(ctx context.Context, org, ws, id string) (Task, error) {
	return call[Task](ctx, c, http.MethodDelete, wsRoute(org, ws, "tasks", id), nil, nil)
}

// GetTaskBatch returns a batch's summary and its tasks.
func (c *Client) GetTaskBatch(ctx context.Context, org, ws, id string) (TaskBatch, error) {
	return call[TaskBatch](ctx, c, http.MethodGet, wsRoute(org, ws, "task-batches", id), nil, nil)
}
