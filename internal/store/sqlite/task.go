package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Tasks (migration 0017).

const resTask = dialect.Task

func toTask(t litedb.Task) (store.Task, error) {
	return store.Task{ID: t.ID, OrgID: t.OrgID, WorkspaceID: t.WorkspaceID, BatchID: t.BatchID, SandboxID: t.SandboxID,
		Status: t.Status, Spec: json.RawMessage(t.Spec), Result: json.RawMessage(t.Result), CreatedAt: fromMicro(t.CreatedAt), Runner: t.Runner}, nil
}

// CreateTask inserts t.
func (q *queries) CreateTask(ctx context.Context, t store.Task) error {
	if err := dialect.CheckTask(t); err != nil {
		return err
	}
	return classify("create task", resTask, q.wq.CreateTask(ctx, litedb.CreateTaskParams{
		ID: t.ID, OrgID: t.OrgID, WorkspaceID: t.WorkspaceID, BatchID: t.BatchID, SandboxID: t.SandboxID,
		Status: t.Status, Spec: string(t.Spec), Result: string(t.Result), CreatedAt: micros(orNow(t.CreatedAt)), Runner: t.Runner,
	}))
}

// GetTask returns the task id.
func (q *queries) GetTask(ctx context.Context, id string) (store.Task, error) {
	t, err := q.rq.GetTask(ctx, id)
	if err != nil {
		return store.Task{}, classify("get task", resTask, err)
	}
	return toTask(t)
}

// ListTasks lists a workspace's tasks, or one batch's, oldest first.
func (q *queries) ListTasks(ctx context.Context, f store.TaskFilter, page store.Page) ([]store.Task, string, error) {
	return listPage(ctx, "list tasks", resTask, page,
		func(ctx context.Context, k keyset) ([]litedb.Task, error) {
			return q.rq.ListTasks(ctx, litedb.ListTasksParams{WorkspaceID: f.WorkspaceID, BatchID: f.BatchID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toTask, func(t store.Task) (time.Time, string) { return t.CreatedAt, t.ID })
}

// UpdateTask writes t's status, sandbox and result if it is still in from.
func (q *queries) UpdateTask(ctx context.Context, t store.Task, from string) (bool, error) {
	if err := dialect.CheckTask(t); err != nil {
		return false, err
	}
	n, err := q.wq.UpdateTask(ctx, litedb.UpdateTaskParams{Status: t.Status, SandboxID: t.SandboxID, Result: string(t.Result), ID: t.ID, FromStatus: from})
	return n == 1, classify("update task", resTask, err)
}

// ListUnfinishedTasks lists the pending and running tasks.
func (q *queries) ListUnfinishedTasks(ctx context.Context) ([]store.Task, error) {
	rows, err := q.rq.ListUnfinishedTasks(ctx)
	if err != nil {
		return nil, classify("list unfinished tasks", resTask, err)
	}
	return mapRows(rows, toTask)
}
