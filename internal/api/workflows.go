package api

import (
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/workflow"
	"github.com/paddockhq/paddock/pkg/client"
)

// Workflows are named sequences of steps run on a runtime, their runs,
// and the live follow of a run.
func Workflows(s *workflow.Service) Feature {
	return Feature{Name: "workflows", use: func(a *API) { a.workflows = s }, routes: func(a *API) []Route {
		wf := rtPrefix + "/workflows/{workflow}"
		return []Route{
			route("POST", rtPrefix+"/workflows", member, a.createWorkflow),
			route("GET", rtPrefix+"/workflows", viewer, a.listWorkflows),
			route("GET", wf, viewer, a.getWorkflow),
			route("DELETE", wf, member, a.deleteWorkflow),
			route("POST", wf+"/cancel", member, a.cancelWorkflow),
			route("GET", wf+"/runs", viewer, a.listWorkflowRuns),
			route("GET", wf+"/runs/{run_id}", viewer, a.getWorkflowRun),
			route("GET", wf+"/follow", viewer, a.followWorkflow),
		}
	}}
}

func (a *API) createWorkflow(w http.ResponseWriter, r *http.Request) error {
	var req client.CreateWorkflowRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	steps := make([]workflow.Step, 0, len(req.Steps))
	for _, s := range req.Steps {
		steps = append(steps, workflow.Step{Name: s.Name, Type: s.Type, Argv: s.Argv, Env: s.Env, Cwd: s.Cwd, Prompt: s.Prompt,
			Harness: s.Harness, Model: s.Model, Score: s.Score, TimeoutSeconds: s.TimeoutSeconds, ContinueOnError: s.ContinueOnError})
	}
	wf, run, err := a.workflows.Create(r.Context(), workflow.Request{Runtime: rt, Name: req.Name, Steps: steps, Schedule: req.Schedule})
	if err != nil {
		return err
	}
	out := workflowOut(wf)
	ro := workflowRunOut(run)
	out.LastRun = &ro
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (a *API) listWorkflows(w http.ResponseWriter, r *http.Request) error {
	rt, page, err := a.runtimePage(r)
	if err != nil {
		return err
	}
	wfs, next, err := a.workflows.List(r.Context(), rt, page)
	if err != nil {
		return listError(err)
	}
	out := client.List[client.Workflow]{Items: make([]client.Workflow, 0, len(wfs)), NextCursor: next}
	for _, wf := range wfs {
		o, err := a.withLastRun(r, wf)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, o)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// workflowOf resolves {workflow} on {runtime_id}.
func (a *API) workflowOf(r *http.Request) (workflow.Workflow, error) {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return workflow.Workflow{}, err
	}
	return a.workflows.Find(r.Context(), rt, r.PathValue("workflow"))
}

// withLastRun is wf on the wire with its newest run.
func (a *API) withLastRun(r *http.Request, wf workflow.Workflow) (client.Workflow, error) {
	out := workflowOut(wf)
	run, ok, err := a.workflows.LastRun(r.Context(), wf)
	if err != nil {
		return out, err
	}
	if ok {
		ro := workflowRunOut(run)
		out.LastRun = &ro
	}
	return out, nil
}

func (a *API) getWorkflow(w http.ResponseWriter, r *http.Request) error {
	wf, err := a.workflowOf(r)
	if err != nil {
		return err
	}
	out, err := a.withLastRun(r, wf)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) deleteWorkflow(w http.ResponseWriter, r *http.Request) error {
	wf, err := a.workflowOf(r)
	if err != nil {
		return err
	}
	if err := a.workflows.Delete(r.Context(), wf); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// runQuery is the run_id query parameter, "" for the newest run.
func runQuery(r *http.Request) (string, error) {
	id := r.URL.Query().Get("run_id")
	if id != "" && !isUUID(id) {
		return "", errdefs.InvalidArgument("invalid_filter", "run_id must be a UUID")
	}
	return id, nil
}

func (a *API) cancelWorkflow(w http.ResponseWriter, r *http.Request) error {
	id, err := runQuery(r)
	if err != nil {
		return err
	}
	wf, err := a.workflowOf(r)
	if err != nil {
		return err
	}
	run, err := a.workflows.Cancel(r.Context(), wf, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, workflowRunOut(run))
	return nil
}

func (a *API) listWorkflowRuns(w http.ResponseWriter, r *http.Request) error {
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	wf, err := a.workflowOf(r)
	if err != nil {
		return err
	}
	runs, next, err := a.workflows.Runs(r.Context(), wf, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(runs, next, workflowRunOut))
	return nil
}

func (a *API) getWorkflowRun(w http.ResponseWriter, r *http.Request) error {
	wf, err := a.workflowOf(r)
	if err != nil {
		return err
	}
	id := r.PathValue("run_id")
	if !isUUID(id) {
		return errdefs.NotFound(workflow.CodeRunNotFound, "run %s not found", id)
	}
	run, err := a.workflows.RunOf(r.Context(), wf, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, workflowRunOut(run))
	return nil
}

// followWorkflow streams a run's events as NDJSON until it ends.
func (a *API) followWorkflow(w http.ResponseWriter, r *http.Request) error {
	id, err := runQuery(r)
	if err != nil {
		return err
	}
	wf, err := a.workflowOf(r)
	if err != nil {
		return err
	}
	ew := newEventWriter(w)
	err = a.workflows.Follow(r.Context(), wf, id, func(ev workflow.Event) error {
		out := client.WorkflowEvent{Type: ev.Type, RunID: ev.RunID, Status: ev.Status, Time: ev.Time}
		if ev.Step != nil {
			st, idx := stepStateOut(*ev.Step), ev.Index
			out.Index, out.Step = &idx, &st
		}
		return ew.send(out)
	})
	if err != nil && ew.started {
		if r.Context().Err() == nil {
			ew.sendError(r.Context(), a, err)
		}
		return nil
	}
	return err
}

// workflowOut is a workflow on the wire, without its run.
func workflowOut(wf workflow.Workflow) client.Workflow {
	out := client.Workflow{ID: wf.ID, RuntimeID: wf.RuntimeID, Name: wf.Name, Schedule: wf.Spec.Schedule,
		Steps: make([]client.WorkflowStep, 0, len(wf.Spec.Steps)), CreatedAt: wf.CreatedAt.UTC()}
	for _, s := range wf.Spec.Steps {
		out.Steps = append(out.Steps, client.WorkflowStep{Name: s.Name, Type: s.Type, Argv: s.Argv, Env: s.Env, Cwd: s.Cwd,
			Prompt: s.Prompt, Harness: s.Harness, Model: s.Model, Score: s.Score, TimeoutSeconds: s.TimeoutSeconds, ContinueOnError: s.ContinueOnError})
	}
	out.NextRunAt = optionalTime(wf.NextRunAt)
	return out
}

// workflowRunOut is a run on the wire.
func workflowRunOut(run workflow.Run) client.WorkflowRun {
	out := client.WorkflowRun{ID: run.ID, WorkflowID: run.WorkflowID, Status: run.Status, Error: run.State.Error,
		Steps: make([]client.WorkflowStepState, 0, len(run.State.Steps)), CreatedAt: run.CreatedAt.UTC(),
		StartedAt: optionalTime(run.State.StartedAt), FinishedAt: optionalTime(run.State.FinishedAt)}
	for _, st := range run.State.Steps {
		out.Steps = append(out.Steps, stepStateOut(st))
	}
	return out
}

func stepStateOut(st workflow.StepState) client.WorkflowStepState {
	return client.WorkflowStepState{Name: st.Name, Type: st.Type, Status: st.Status, Attempts: st.Attempts, ExitCode: st.ExitCode,
		Stdout: st.Stdout, Stderr: st.Stderr, StdoutTruncated: st.StdoutTruncated, StderrTruncated: st.StderrTruncated,
		Result: st.Result, SessionID: st.SessionID, TaskID: st.TaskID, Score: st.Score, Error: st.Error, ErrorCode: st.ErrorCode,
		StartedAt: optionalTime(st.StartedAt), FinishedAt: optionalTime(st.FinishedAt)}
}

// optionalTime is t in UTC, nil for the zero time.
func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
