package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// workflow stores a workflow named name of rt, next run at next.
func (f *fixture) workflow(rt store.Runtime, name string, next time.Time) store.Workflow {
	f.t.Helper()
	w := store.Workflow{ID: uuid.NewString(), OrgID: rt.OrgID, WorkspaceID: rt.WorkspaceID, RuntimeID: rt.ID, Name: name,
		Spec: json.RawMessage(`{"v":1,"steps":[]}`), NextRunAt: next, CreatedAt: f.next()}
	must(f.t, f.s.CreateWorkflow(f.ctx, w))
	w.CreatedAt, w.NextRunAt = ts(w.CreatedAt), ts(w.NextRunAt)
	return w
}

// workflowRun stores a pending run of w.
func (f *fixture) workflowRun(w store.Workflow) store.WorkflowRun {
	f.t.Helper()
	r := store.WorkflowRun{ID: uuid.NewString(), WorkflowID: w.ID, OrgID: w.OrgID, WorkspaceID: w.WorkspaceID,
		Status: store.WorkflowPending, State: json.RawMessage(`{"v":1}`), Version: 1, CreatedAt: f.next()}
	must(f.t, f.s.CreateWorkflowRun(f.ctx, r))
	r.CreatedAt = ts(r.CreatedAt)
	return r
}

func testWorkflows(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)
	rt, rt2 := f.runtime(w), f.runtime(w)
	due := base.Add(time.Hour)
	a := f.workflow(rt, "a", time.Time{})
	b := f.workflow(rt, "b", due)
	f.workflow(rt2, "a", time.Time{}) // a name is per runtime

	got, err := s.GetWorkflow(ctx, b.ID)
	must(t, err)
	equal(t, "get", got, b)
	if _, err := s.GetWorkflow(ctx, uuid.NewString()); !errdefs.IsNotFound(err) {
		t.Fatalf("a missing workflow: err = %v, want not found", err)
	}
	dup := store.Workflow{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, RuntimeID: rt.ID, Name: "a", Spec: json.RawMessage(`{}`)}
	if err := s.CreateWorkflow(ctx, dup); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("a name taken on the runtime: err = %v, want conflict", err)
	}
	first, next, err := s.ListWorkflows(ctx, rt.ID, store.Page{Limit: 1})
	must(t, err)
	rest, _, err := s.ListWorkflows(ctx, rt.ID, store.Page{Limit: 1, Cursor: next})
	must(t, err)
	equal(t, "runtime's workflows by page", append(first, rest...), []store.Workflow{a, b})

	// Due: only b, and its next run moves only from where it was.
	dueNow, err := s.ListDueWorkflows(ctx, due)
	must(t, err)
	equal(t, "due", workflowIDs(dueNow), []string{b.ID})
	if dueNow, err = s.ListDueWorkflows(ctx, due.Add(-time.Second)); err != nil || len(dueNow) != 0 {
		t.Fatalf("due a second early: %v, %v", dueNow, err)
	}
	later := due.Add(time.Minute)
	if ok, err := s.SetWorkflowNextRun(ctx, b.ID, due, later); err != nil || !ok {
		t.Fatalf("move the next run: %v, %v", ok, err)
	}
	if ok, err := s.SetWorkflowNextRun(ctx, b.ID, due, later.Add(time.Hour)); err != nil || ok {
		t.Fatalf("move it again from where it was: %v, %v", ok, err)
	}
	if ok, err := s.SetWorkflowNextRun(ctx, a.ID, time.Time{}, later); err != nil || !ok {
		t.Fatalf("schedule one that had none: %v, %v", ok, err)
	}
	got, err = s.GetWorkflow(ctx, b.ID)
	must(t, err)
	equal(t, "next run", got.NextRunAt, ts(later))

	testWorkflowRuns(t, f, a, b)
	must(t, s.DeleteWorkflow(ctx, a.ID))
	if err := s.DeleteWorkflow(ctx, a.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("delete twice: err = %v, want not found", err)
	}
}

// testWorkflowRuns checks a's and b's runs, then that deleting a takes
// its runs.
func testWorkflowRuns(t *testing.T, f *fixture, a, b store.Workflow) {
	s, ctx := f.s, f.ctx
	r1, r2 := f.workflowRun(a), f.workflowRun(a)
	rb := f.workflowRun(b)
	runs, next, err := s.ListWorkflowRuns(ctx, a.ID, store.Page{Limit: 1})
	must(t, err)
	more, _, err := s.ListWorkflowRuns(ctx, a.ID, store.Page{Limit: 1, Cursor: next})
	must(t, err)
	equal(t, "runs newest first", append(runs, more...), []store.WorkflowRun{r2, r1})

	r1.Status, r1.State = store.WorkflowRunning, json.RawMessage(`{"v":1,"steps":[{"status":"running"}]}`)
	if ok, err := s.UpdateWorkflowRun(ctx, r1, store.WorkflowPending); err != nil || !ok {
		t.Fatalf("an update from the stored status: %v, %v", ok, err)
	}
	stale := r1
	stale.Status = store.WorkflowCancelled
	if ok, err := s.UpdateWorkflowRun(ctx, stale, store.WorkflowPending); err != nil || ok {
		t.Fatalf("an update from a status the run left: %v, %v", ok, err)
	}
	// A write decided on an older version does not land, even from the
	// status the run is in: the version fences writers.
	older := r1
	older.State = json.RawMessage(`{"v":1,"steps":[{"status":"cancelled"}]}`)
	if ok, err := s.UpdateWorkflowRun(ctx, older, store.WorkflowRunning); err != nil || ok {
		t.Fatalf("an update from the version the run left: %v, %v", ok, err)
	}
	r1.Version++
	got, err := s.GetWorkflowRun(ctx, r1.ID)
	must(t, err)
	equal(t, "updated run", got, r1)
	if ok, err := s.UpdateWorkflowRun(ctx, r1, store.WorkflowRunning); err != nil || !ok {
		t.Fatalf("an update from the stored status and version: %v, %v", ok, err)
	}
	r1.Version++
	r2.Status = store.WorkflowSucceeded
	_, err = s.UpdateWorkflowRun(ctx, r2, store.WorkflowPending)
	must(t, err)
	unfinished, err := s.ListUnfinishedWorkflowRuns(ctx)
	must(t, err)
	var ours []string
	for _, u := range unfinished {
		if u.WorkflowID == a.ID || u.WorkflowID == b.ID {
			ours = append(ours, u.ID)
		}
	}
	equal(t, "unfinished", ours, []string{r1.ID, rb.ID})
	must(t, s.DeleteWorkflow(ctx, a.ID))
	if _, err := s.GetWorkflowRun(ctx, r1.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("a deleted workflow's run: err = %v, want not found", err)
	}
	if err := s.CreateWorkflow(ctx, a); err != nil { // back, for the caller
		t.Fatal(err)
	}
}

// workflowIDs are the workflows' ids.
func workflowIDs(ws []store.Workflow) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.ID)
	}
	return out
}
