package storetest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// task stores a pending task of w in batch, run by replica-a.
func (f *fixture) task(w store.Workspace, batch string) store.Task {
	f.t.Helper()
	t := store.Task{ID: uuid.NewString(), OrgID: w.OrgID, WorkspaceID: w.ID, BatchID: batch, Status: store.TaskPending,
		Spec: json.RawMessage(`{"v":1,"argv":["true"]}`), Result: json.RawMessage(`{"v":1}`), CreatedAt: f.next(), Runner: "replica-a"}
	must(f.t, f.s.CreateTask(f.ctx, t))
	t.CreatedAt = ts(t.CreatedAt)
	return t
}

func testTasks(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w, other := f.workspace(o), f.workspace(o)
	a, b, c := f.task(w, ""), f.task(w, "batch-1"), f.task(w, "batch-1")
	f.task(other, "")

	got, err := s.GetTask(ctx, a.ID)
	must(t, err)
	equal(t, "get", got, a)
	if _, err := s.GetTask(ctx, uuid.NewString()); !errdefs.IsNotFound(err) {
		t.Fatalf("a missing task: err = %v, want not found", err)
	}
	if err := s.CreateTask(ctx, store.Task{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, Status: store.TaskPending}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("a task without its documents: err = %v, want invalid argument", err)
	}

	// A task whose runner is unknown (made before its column) reads "".
	unknown := store.Task{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: other.ID, Status: store.TaskPending,
		Spec: json.RawMessage(`{"v":1}`), Result: json.RawMessage(`{"v":1}`), CreatedAt: f.next()}
	must(t, s.CreateTask(ctx, unknown))
	if got, err := s.GetTask(ctx, unknown.ID); err != nil || got.Runner != "" {
		t.Fatalf("a task made without a runner: %+v, %v", got, err)
	}

	all, _, err := s.ListTasks(ctx, store.TaskFilter{WorkspaceID: w.ID}, store.Page{})
	must(t, err)
	equal(t, "workspace's tasks", all, []store.Task{a, b, c})
	first, next, err := s.ListTasks(ctx, store.TaskFilter{WorkspaceID: w.ID, BatchID: "batch-1"}, store.Page{Limit: 1})
	must(t, err)
	rest, _, err := s.ListTasks(ctx, store.TaskFilter{WorkspaceID: w.ID, BatchID: "batch-1"}, store.Page{Limit: 1, Cursor: next})
	must(t, err)
	equal(t, "batch's tasks by page", append(first, rest...), []store.Task{b, c})

	// An update lands only from the status it was decided on.
	// The runner is the one that made it: an update keeps it.
	b.Status, b.SandboxID, b.Result = store.TaskRunning, uuid.NewString(), json.RawMessage(`{"v":1,"started":true}`)
	moved := b
	moved.Runner = "replica-b"
	ok, err := s.UpdateTask(ctx, moved, store.TaskPending)
	must(t, err)
	if !ok {
		t.Fatal("an update from the stored status did not land")
	}
	stale := b
	stale.Status = store.TaskCancelled
	if ok, err := s.UpdateTask(ctx, stale, store.TaskPending); err != nil || ok {
		t.Fatalf("an update from a status the task left: ok = %v, err = %v", ok, err)
	}
	got, err = s.GetTask(ctx, b.ID)
	must(t, err)
	equal(t, "updated", got, b)

	a.Status = store.TaskSucceeded
	_, err = s.UpdateTask(ctx, a, store.TaskPending)
	must(t, err)
	unfinished, err := s.ListUnfinishedTasks(ctx)
	must(t, err)
	var ours []string
	for _, u := range unfinished {
		if u.WorkspaceID == w.ID {
			ours = append(ours, u.ID)
		}
	}
	equal(t, "unfinished", ours, []string{b.ID, c.ID})
	for _, u := range unfinished {
		if u.WorkspaceID == w.ID && u.Runner != "replica-a" {
			t.Fatalf("an unfinished task's runner: %+v", u)
		}
	}
}
