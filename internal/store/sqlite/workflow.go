package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Workflows and their runs (migration 0021).

func toWorkflow(w litedb.Workflow) store.Workflow {
	return store.Workflow{ID: w.ID, OrgID: w.OrgID, WorkspaceID: w.WorkspaceID, RuntimeID: w.RuntimeID, Name: w.Name,
		Spec: json.RawMessage(w.Spec), NextRunAt: fromOptTime(w.NextRunAt), CreatedAt: fromMicro(w.CreatedAt)}
}

func toWorkflowRun(r litedb.WorkflowRun) store.WorkflowRun {
	return store.WorkflowRun{ID: r.ID, WorkflowID: r.WorkflowID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID,
		Status: r.Status, State: json.RawMessage(r.State), Version: r.Version, CreatedAt: fromMicro(r.CreatedAt)}
}

// CreateWorkflow inserts w.
func (q *queries) CreateWorkflow(ctx context.Context, w store.Workflow) error {
	if err := dialect.CheckWorkflow(w); err != nil {
		return err
	}
	return classify("create workflow", dialect.Workflow, q.wq.CreateWorkflow(ctx, litedb.CreateWorkflowParams{
		ID: w.ID, OrgID: w.OrgID, WorkspaceID: w.WorkspaceID, RuntimeID: w.RuntimeID, Name: w.Name,
		Spec: string(w.Spec), NextRunAt: optTime(w.NextRunAt), CreatedAt: micros(orNow(w.CreatedAt)),
	}))
}

// GetWorkflow returns the workflow id.
func (q *queries) GetWorkflow(ctx context.Context, id string) (store.Workflow, error) {
	w, err := q.rq.GetWorkflow(ctx, id)
	if err != nil {
		return store.Workflow{}, classify("get workflow", dialect.Workflow, err)
	}
	return toWorkflow(w), nil
}

// ListWorkflows lists a runtime's workflows, oldest first.
func (q *queries) ListWorkflows(ctx context.Context, runtimeID string, page store.Page) ([]store.Workflow, string, error) {
	return listPage(ctx, "list workflows", dialect.Workflow, page,
		func(ctx context.Context, k keyset) ([]litedb.Workflow, error) {
			return q.rq.ListWorkflows(ctx, litedb.ListWorkflowsParams{RuntimeID: runtimeID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		}, total(toWorkflow), func(w store.Workflow) (time.Time, string) { return w.CreatedAt, w.ID })
}

// DeleteWorkflow deletes the workflow id and its runs.
func (q *queries) DeleteWorkflow(ctx context.Context, id string) error {
	n, err := q.wq.DeleteWorkflow(ctx, id)
	return deleted(dialect.Workflow, n, err)
}

// SetWorkflowNextRun moves the next run from from to next.
func (q *queries) SetWorkflowNextRun(ctx context.Context, id string, from, next time.Time) (bool, error) {
	n, err := q.wq.SetWorkflowNextRun(ctx, litedb.SetWorkflowNextRunParams{NextRunAt: optTime(next), ID: id, FromAt: optTime(from)})
	return n == 1, classify("set workflow next run", dialect.Workflow, err)
}

// ListDueWorkflows lists the workflows due at at.
func (q *queries) ListDueWorkflows(ctx context.Context, at time.Time) ([]store.Workflow, error) {
	rows, err := q.rq.ListDueWorkflows(ctx, optTime(at))
	if err != nil {
		return nil, classify("list due workflows", dialect.Workflow, err)
	}
	return mapRows(rows, total(toWorkflow))
}

// CreateWorkflowRun inserts r.
func (q *queries) CreateWorkflowRun(ctx context.Context, r store.WorkflowRun) error {
	if err := dialect.CheckWorkflowRun(r); err != nil {
		return err
	}
	return classify("create workflow run", dialect.WorkflowRun, q.wq.CreateWorkflowRun(ctx, litedb.CreateWorkflowRunParams{
		ID: r.ID, WorkflowID: r.WorkflowID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, Status: r.Status,
		State: string(r.State), CreatedAt: micros(orNow(r.CreatedAt)),
	}))
}

// GetWorkflowRun returns the run id.
func (q *queries) GetWorkflowRun(ctx context.Context, id string) (store.WorkflowRun, error) {
	r, err := q.rq.GetWorkflowRun(ctx, id)
	if err != nil {
		return store.WorkflowRun{}, classify("get workflow run", dialect.WorkflowRun, err)
	}
	return toWorkflowRun(r), nil
}

// ListWorkflowRuns lists a workflow's runs, newest first.
func (q *queries) ListWorkflowRuns(ctx context.Context, workflowID string, page store.Page) ([]store.WorkflowRun, string, error) {
	return listPage(ctx, "list workflow runs", dialect.WorkflowRun, page,
		func(ctx context.Context, k keyset) ([]litedb.WorkflowRun, error) {
			return q.rq.ListWorkflowRuns(ctx, litedb.ListWorkflowRunsParams{WorkflowID: workflowID, BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch})
		}, total(toWorkflowRun), func(r store.WorkflowRun) (time.Time, string) { return r.CreatedAt, r.ID })
}

// UpdateWorkflowRun writes r's status and state if it is still in from
// at r.Version.
func (q *queries) UpdateWorkflowRun(ctx context.Context, r store.WorkflowRun, from string) (bool, error) {
	if err := dialect.CheckWorkflowRun(r); err != nil {
		return false, err
	}
	n, err := q.wq.UpdateWorkflowRun(ctx, litedb.UpdateWorkflowRunParams{Status: r.Status, State: string(r.State), ID: r.ID, FromStatus: from, Version: r.Version})
	return n == 1, classify("update workflow run", dialect.WorkflowRun, err)
}

// ListUnfinishedWorkflowRuns lists the pending and running runs.
func (q *queries) ListUnfinishedWorkflowRuns(ctx context.Context) ([]store.WorkflowRun, error) {
	rows, err := q.rq.ListUnfinishedWorkflowRuns(ctx)
	if err != nil {
		return nil, classify("list unfinished workflow runs", dialect.WorkflowRun, err)
	}
	return mapRows(rows, total(toWorkflowRun))
}
