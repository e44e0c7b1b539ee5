package workflow

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/store"
)

// Request asks for a workflow named Name on Runtime: its steps, and its
// schedule ("" for none).
type Request struct {
	Runtime  store.Runtime
	Name     string
	Steps    []Step
	Schedule string
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func invalid(format string, args ...any) error {
	return errdefs.InvalidArgument(CodeInvalid, format, args...)
}

// check validates r's name and steps, filling the steps' default names.
func (r *Request) check() error {
	if len(r.Name) > MaxName || !namePattern.MatchString(r.Name) {
		return invalid("name must be 1 to %d letters, digits, '.', '_' or '-', starting with a letter or digit", MaxName)
	}
	if len(r.Steps) == 0 || len(r.Steps) > MaxSteps {
		return invalid("a workflow has 1 to %d steps", MaxSteps)
	}
	seen := map[string]bool{}
	for i := range r.Steps {
		st := &r.Steps[i]
		if st.Name == "" {
			st.Name = fmt.Sprintf("step-%d", i+1)
		}
		if len(st.Name) > MaxName || !namePattern.MatchString(st.Name) || seen[st.Name] {
			return invalid("steps[%d].name must be a unique name of 1 to %d letters, digits, '.', '_' or '-'", i, MaxName)
		}
		seen[st.Name] = true
		if err := st.check(); err != nil {
			pe, _ := errdefs.Public(err)
			return errdefs.InvalidArgument(pe.Code, "steps[%d] (%s): %s", i, st.Name, pe.Message)
		}
	}
	return nil
}

// check validates one step by its type.
func (st *Step) check() error {
	argv, prompt := len(st.Argv) > 0, st.Prompt != ""
	switch st.Type {
	case StepExec:
		if !argv || prompt || st.Harness != "" || st.Model != "" || len(st.Score) > 0 {
			return invalid("an exec step takes argv (with env, cwd), and no prompt, harness, model or score")
		}
		if st.Cwd != "" && !strings.HasPrefix(st.Cwd, "/") {
			return invalid("cwd must be an absolute path")
		}
	case StepPrompt:
		if !prompt || argv || len(st.Env) > 0 || st.Cwd != "" || len(st.Score) > 0 {
			return invalid("a prompt step takes prompt (with harness, model), and no argv, env, cwd or score")
		}
	case StepTask:
		if argv == prompt || len(st.Env) > 0 || st.Cwd != "" {
			return invalid("a task step takes argv or prompt, one of them (and score), and no env or cwd")
		}
		if argv && (st.Harness != "" || st.Model != "") {
			return invalid("harness and model go with a prompt")
		}
	default:
		return invalid("type must be exec, prompt or task")
	}
	if st.Harness != "" {
		if _, ok := harness.Lookup(st.Harness); !ok {
			return errdefs.InvalidArgument("unknown_harness", "unknown harness %q; GET /api/capabilities lists them", st.Harness)
		}
	}
	if (argv && st.Argv[0] == "") || (len(st.Score) > 0 && st.Score[0] == "") {
		return invalid("argv and score must name a command")
	}
	if len(st.Argv) > MaxArgs || len(st.Score) > MaxArgs || len(st.Env) > MaxArgs {
		return invalid("argv, score and env take at most %d entries", MaxArgs)
	}
	if len(st.Prompt) > 256<<10 {
		return invalid("the prompt is longer than 256 KiB")
	}
	for _, a := range append(append(append([]string{}, st.Argv...), st.Score...), st.Prompt, st.Model, st.Cwd) {
		if strings.ContainsRune(a, 0) {
			return invalid("an argument contains a NUL byte")
		}
	}
	if st.TimeoutSeconds < 0 || st.TimeoutSeconds > int64(MaxTimeout/time.Second) {
		return invalid("timeout_seconds must be between 1 and %d", int64(MaxTimeout/time.Second))
	}
	return nil
}

// Create records a workflow of rt and its first run, pending; the loop
// runs it. A schedule makes it run again at each of its times after.
func (s *Service) Create(ctx context.Context, r Request) (Workflow, Run, error) {
	if err := r.check(); err != nil {
		return Workflow{}, Run{}, err
	}
	now := s.now()
	var next time.Time
	if r.Schedule != "" {
		sched, err := ParseSchedule(r.Schedule)
		if err != nil {
			return Workflow{}, Run{}, err
		}
		next = sched.Next(now)
	}
	spec := Spec{V: specVersion, Steps: r.Steps, Schedule: r.Schedule}
	w, err := encodeWorkflow(store.Workflow{ID: uuid.NewString(), OrgID: r.Runtime.OrgID, WorkspaceID: r.Runtime.WorkspaceID,
		RuntimeID: r.Runtime.ID, Name: r.Name, NextRunAt: next, CreatedAt: now}, spec)
	if err != nil {
		return Workflow{}, Run{}, err
	}
	run, err := newRun(w, now)
	if err != nil {
		return Workflow{}, Run{}, err
	}
	if s.isClosed() {
		return Workflow{}, Run{}, errdefs.Unavailable(CodeShutting, "the server is shutting down")
	}
	err = s.store.InTx(ctx, func(q store.Queries) error {
		if err := q.CreateWorkflow(ctx, w.Workflow); err != nil {
			if errdefs.IsConflict(err) {
				return errdefs.Conflict(CodeExists, "runtime %s has a workflow named %s", r.Runtime.ID, r.Name)
			}
			return err
		}
		return q.CreateWorkflowRun(ctx, run.WorkflowRun)
	})
	if err != nil {
		return Workflow{}, Run{}, err
	}
	s.poke()
	return w, run, nil
}

// newRun is a pending run of w, every step pending.
func newRun(w Workflow, at time.Time) (Run, error) {
	st := State{V: stateVersion, Steps: make([]StepState, 0, len(w.Spec.Steps))}
	for _, step := range w.Spec.Steps {
		st.Steps = append(st.Steps, StepState{Name: step.Name, Type: step.Type, Status: StepPending})
	}
	run := Run{WorkflowRun: store.WorkflowRun{ID: uuid.NewString(), WorkflowID: w.ID, OrgID: w.OrgID, WorkspaceID: w.WorkspaceID,
		Status: store.WorkflowPending, Version: 1, CreatedAt: at}, State: st}
	return run, run.encode()
}

// Get returns the workflow id of runtime rt; another runtime's is not
// found.
func (s *Service) Get(ctx context.Context, rt store.Runtime, id string) (Workflow, error) {
	w, err := s.store.GetWorkflow(ctx, id)
	if err == nil && w.RuntimeID != rt.ID {
		err = errdefs.NotFound(CodeNotFound, "workflow %s not found", id)
	}
	if errdefs.IsNotFound(err) {
		return Workflow{}, errdefs.NotFound(CodeNotFound, "workflow %s not found", id)
	}
	if err != nil {
		return Workflow{}, err
	}
	return Decode(w)
}

// List lists rt's workflows, oldest first.
func (s *Service) List(ctx context.Context, rt store.Runtime, page store.Page) ([]Workflow, string, error) {
	rows, next, err := s.store.ListWorkflows(ctx, rt.ID, page)
	if err != nil {
		return nil, "", err
	}
	out := make([]Workflow, 0, len(rows))
	for _, r := range rows {
		w, err := Decode(r)
		if err != nil {
			return nil, "", err
		}
		out = append(out, w)
	}
	return out, next, nil
}

// Runs lists the workflow w's runs, newest first.
func (s *Service) Runs(ctx context.Context, w Workflow, page store.Page) ([]Run, string, error) {
	rows, next, err := s.store.ListWorkflowRuns(ctx, w.ID, page)
	if err != nil {
		return nil, "", err
	}
	out := make([]Run, 0, len(rows))
	for _, r := range rows {
		run, err := DecodeRun(r)
		if err != nil {
			return nil, "", err
		}
		out = append(out, run)
	}
	return out, next, nil
}

// LastRun is w's newest run; ok false when it has none.
func (s *Service) LastRun(ctx context.Context, w Workflow) (Run, bool, error) {
	runs, _, err := s.Runs(ctx, w, store.Page{Limit: 1})
	if err != nil || len(runs) == 0 {
		return Run{}, false, err
	}
	return runs[0], true, nil
}

// RunOf returns the run id of w.
func (s *Service) RunOf(ctx context.Context, w Workflow, id string) (Run, error) {
	r, err := s.store.GetWorkflowRun(ctx, id)
	if err == nil && r.WorkflowID != w.ID {
		err = errdefs.NotFound(CodeRunNotFound, "run %s not found", id)
	}
	if errdefs.IsNotFound(err) {
		return Run{}, errdefs.NotFound(CodeRunNotFound, "run %s of workflow %s not found", id, w.Name)
	}
	if err != nil {
		return Run{}, err
	}
	return DecodeRun(r)
}

func (s *Service) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// poke wakes the loop, if it runs here, to look for runs at once.
func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Find returns rt's workflow ref, its UUID or its name.
func (s *Service) Find(ctx context.Context, rt store.Runtime, ref string) (Workflow, error) {
	if _, err := uuid.Parse(ref); err == nil {
		return s.Get(ctx, rt, ref)
	}
	page := store.Page{Limit: 500}
	for {
		ws, next, err := s.List(ctx, rt, page)
		if err != nil {
			return Workflow{}, err
		}
		for _, w := range ws {
			if w.Name == ref {
				return w, nil
			}
		}
		if next == "" {
			return Workflow{}, errdefs.NotFound(CodeNotFound, "workflow %s not found", ref)
		}
		page.Cursor = next
	}
}
