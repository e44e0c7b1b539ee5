package api

import (
	"context"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/task"
	"github.com/paddockhq/paddock/pkg/client"
)

func (a *API) createTasks(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	_, ws, err := a.workspace(r)
	if err != nil {
		return err
	}
	var req client.CreateTasksRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	src, err := a.taskSource(ctx, ws, &req)
	if err != nil {
		return err
	}
	batch, tasks, err := a.tasks.Create(ctx, ws, task.Request{
		Source: src, Template: req.Template, SnapshotID: req.Snapshot, Argv: req.Argv, Prompt: req.Prompt, Harness: req.Harness, Model: req.Model,
		Score: req.Score, Timeout: time.Duration(req.TimeoutSeconds) * time.Second,
		Count: req.Count, Concurrency: req.Concurrency,
	})
	if err != nil {
		return err
	}
	out := client.TaskBatch{ID: batch, Count: len(tasks), Statuses: map[string]int{store.TaskPending: len(tasks)}, Tasks: make([]client.Task, 0, len(tasks))}
	for _, t := range tasks {
		out.Concurrency = t.Spec.Concurrency
		out.Tasks = append(out.Tasks, taskView(t))
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// taskSource resolves req's one source: a runtime of the workspace, a
// template, a snapshot (each another workspace's is not found), or an
// inline configuration (the installation's defaults when none is given).
// A template given by id is recorded by its name.
func (a *API) taskSource(ctx context.Context, ws store.Workspace, req *client.CreateTasksRequest) (store.Runtime, error) {
	n := 0
	for _, given := range []bool{req.RuntimeID != "", req.Runtime != nil, req.Template != "", req.Snapshot != ""} {
		if given {
			n++
		}
	}
	switch {
	case n > 1:
		return store.Runtime{}, errdefs.InvalidArgument(task.CodeInvalid, "give one source of runtime_id, runtime, template and snapshot, not several")
	case req.RuntimeID != "":
		if !isUUID(req.RuntimeID) {
			return store.Runtime{}, errdefs.InvalidArgument(task.CodeInvalid, "runtime_id must be a UUID")
		}
		return a.path.InWorkspace(ctx, ws.ID, req.RuntimeID)
	case req.Template != "":
		t, err := a.runtimes.Template(ctx, ws, req.Template)
		if err != nil {
			return store.Runtime{}, err
		}
		req.Template = t.Name
		return a.runtimes.TaskSource(ctx, ws, runtime.FromTemplate(t.Config, store.RuntimeConfig{}))
	case req.Snapshot != "":
		if !isUUID(req.Snapshot) {
			return store.Runtime{}, errdefs.InvalidArgument(task.CodeInvalid, "snapshot must be a snapshot's id, a UUID")
		}
		snap, err := a.tasks.Snapshot(ctx, ws, req.Snapshot)
		if err != nil {
			return store.Runtime{}, err
		}
		return a.runtimes.TaskSource(ctx, ws, snap.Config)
	}
	cfg, err := configIn(req.Runtime)
	if err != nil {
		return store.Runtime{}, err
	}
	return a.runtimes.TaskSource(ctx, ws, cfg)
}

func (a *API) listTasks(w http.ResponseWriter, r *http.Request) error {
	ws, page, err := a.workspacePage(r)
	if err != nil {
		return err
	}
	batch := r.URL.Query().Get("batch_id")
	if batch != "" && !isUUID(batch) {
		return errdefs.InvalidArgument("invalid_filter", "batch_id must be a UUID")
	}
	tasks, next, err := a.tasks.List(r.Context(), ws, batch, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(tasks, next, taskView))
	return nil
}

// taskOf resolves {task_id} in {org}/{workspace}.
func (a *API) taskOf(r *http.Request) (store.Workspace, string, error) {
	_, ws, err := a.workspace(r)
	if err != nil {
		return ws, "", err
	}
	id := r.PathValue("task_id")
	if !isUUID(id) {
		return ws, "", errdefs.NotFound(task.CodeNotFound, "task %s not found", id)
	}
	return ws, id, nil
}

func (a *API) getTask(w http.ResponseWriter, r *http.Request) error {
	ws, id, err := a.taskOf(r)
	if err != nil {
		return err
	}
	t, err := a.tasks.Get(r.Context(), ws, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, taskView(t))
	return nil
}

func (a *API) cancelTask(w http.ResponseWriter, r *http.Request) error {
	ws, id, err := a.taskOf(r)
	if err != nil {
		return err
	}
	t, err := a.tasks.Cancel(r.Context(), ws, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, taskView(t))
	return nil
}

func (a *API) getTaskBatch(w http.ResponseWriter, r *http.Request) error {
	_, ws, err := a.workspace(r)
	if err != nil {
		return err
	}
	id := r.PathValue("batch_id")
	if !isUUID(id) {
		return errdefs.NotFound("task_batch_not_found", "batch %s not found", id)
	}
	b, err := a.tasks.BatchOf(r.Context(), ws, id)
	if err != nil {
		return err
	}
	out := client.TaskBatch{ID: b.ID, Count: b.Count, Concurrency: b.Concurrency, Statuses: b.Statuses, Tasks: make([]client.Task, 0, len(b.Tasks))}
	for _, t := range b.Tasks {
		out.Tasks = append(out.Tasks, taskView(t))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// taskView is a task on the wire.
func taskView(t task.Task) client.Task {
	res := t.Result
	out := client.Task{
		ID: t.ID, BatchID: t.BatchID, RuntimeID: t.Spec.RuntimeID, Template: t.Spec.Template, SnapshotID: t.Spec.SnapshotID, SandboxID: t.SandboxID, Status: t.Status,
		Image: t.Spec.Config.Image, Argv: t.Spec.Argv, Prompt: t.Spec.Prompt, Harness: t.Spec.Harness, Model: t.Spec.Model,
		ScoreArgv: t.Spec.Score, TimeoutSeconds: t.Spec.TimeoutSeconds,
		ExitCode: res.ExitCode, Answer: res.Answer, Stdout: res.Stdout, Stderr: res.Stderr,
		StdoutTruncated: res.StdoutTruncated, StderrTruncated: res.StderrTruncated,
		Score: res.Score, ScoreError: res.ScoreError, Error: res.Error, CreatedAt: t.CreatedAt.UTC(),
	}
	if !res.StartedAt.IsZero() {
		at := res.StartedAt.UTC()
		out.StartedAt = &at
	}
	if !res.FinishedAt.IsZero() {
		at := res.FinishedAt.UTC()
		out.FinishedAt = &at
	}
	return out
}
