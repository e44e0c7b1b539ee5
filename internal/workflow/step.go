package workflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/task"
)

// step runs one step of w on its runtime and records what came of it in
// st: its status (succeeded or failed) and output. save stores the run as
// st now says (a task step's task, once made), and reports whether it
// landed. The caller looks at ctx for a cancel or a stop.
func (s *Service) step(ctx context.Context, w Workflow, step Step, st *StepState, save func() bool) {
	rt, err := s.store.GetRuntime(ctx, w.RuntimeID)
	if err != nil {
		s.fail(st, err)
		return
	}
	switch step.Type {
	case StepExec:
		s.exec(ctx, rt, step, st)
	case StepPrompt:
		s.prompt(ctx, rt, step, st)
	case StepTask:
		s.task(ctx, rt, step, st, save)
	}
}

// fail records err, by its public face, as st's failure.
func (s *Service) fail(st *StepState, err error) {
	st.Status, st.Error, st.ErrorCode = StepFailed, publicText(err), publicCode(err)
}

func timeoutOf(step Step) time.Duration {
	if step.TimeoutSeconds == 0 {
		return DefaultTimeout
	}
	return time.Duration(step.TimeoutSeconds) * time.Second
}

// exec runs an exec step's command in the runtime's sandbox (woken if
// paused or archived), keeping the first MaxOutputBytes of each stream.
func (s *Service) exec(ctx context.Context, rt store.Runtime, step Step, st *StepState) {
	c, err := s.agentOf(ctx, rt)
	if err != nil {
		s.fail(st, err)
		return
	}
	limit := timeoutOf(step)
	stdout, stderr := &agentconn.LimitedBuffer{Max: MaxOutputBytes}, &agentconn.LimitedBuffer{Max: MaxOutputBytes}
	// The agent kills the process at the limit; the context bounds a
	// link that stops answering.
	ectx, cancel := context.WithTimeout(ctx, limit+30*time.Second)
	defer cancel()
	es, err := c.Exec(ectx, agentconn.ExecRequest{Argv: step.Argv, Env: step.Env, Cwd: cmp.Or(step.Cwd, defaultWorkdir), Timeout: limit})
	if err != nil {
		s.fail(st, err)
		return
	}
	es2, werr := es.Wait(stdout, stderr)
	st.Stdout, st.StdoutTruncated = stdout.String(), stdout.Truncated
	st.Stderr, st.StderrTruncated = stderr.String(), stderr.Truncated
	switch {
	case ctx.Err() != nil:
		return
	case werr == nil && es2.TimedOut, errors.Is(werr, context.DeadlineExceeded):
		st.Status, st.Error, st.ErrorCode = StepFailed, "the command did not end within its time limit", "timed_out"
	case werr != nil:
		s.fail(st, werr)
	default:
		code := es2.Code
		st.ExitCode = &code
		st.Status = StepSucceeded
		if code != 0 {
			st.Status, st.Error = StepFailed, "the command exited with status "+itoa(code)
		}
	}
}

// agentWait bounds how long an exec step waits for a runtime the
// server cannot reach yet (503: a start-up reconciliation holds it).
const agentWait = 2 * time.Minute

// agentOf dials rt's agent, waking it if paused; while the runtime is
// unavailable for a moment (a restarted server reconciling it) it tries
// again each second, up to agentWait.
func (s *Service) agentOf(ctx context.Context, rt store.Runtime) (*agentconn.Client, error) {
	deadline := time.Now().Add(agentWait)
	for {
		c, _, err := s.runtimes.AgentOf(ctx, rt)
		if err == nil || !errors.Is(err, errdefs.ErrUnavailable) || time.Now().After(deadline) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
		if rt, err = s.store.GetRuntime(ctx, rt.ID); err != nil {
			return nil, err
		}
	}
}

// prompt runs a prompt step as one turn of its harness, in a session of
// its own. A harness whose secret the runtime lacks fails the step with
// harness_secret_missing, as the prompt route answers; nothing runs. The
// turn belongs to the server once it runs: a cancel or a stop leaves it
// to end by itself.
func (s *Service) prompt(ctx context.Context, rt store.Runtime, step Step, st *StepState) {
	type outcome struct {
		o   session.Outcome
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		o, err := s.prompts.Run(ctx, rt, session.Turn{Kind: session.KindPrompt, Request: session.Request{
			Prompt: step.Prompt, Harness: step.Harness, Model: step.Model, TimeoutSeconds: step.TimeoutSeconds,
		}}, nil)
		done <- outcome{o, err}
	}()
	var out outcome
	select {
	case out = <-done:
	case <-ctx.Done():
		return
	}
	switch {
	case out.err != nil:
		s.fail(st, out.err)
		return
	case out.o.Error != "":
		st.Status, st.Error = StepFailed, out.o.Error
	default:
		st.Status = StepSucceeded
	}
	st.SessionID, st.Result = out.o.Session.ID, cut(out.o.Result)
}

// task runs a task step as one evaluation task made from the runtime's
// configuration (a sandbox of its own) and waits for it to end. The task
// is recorded on the run as soon as it is made, so a step cut short
// while its task goes on (the lease moved to another replica) waits for
// that task when it resumes instead of making (and billing) another; a
// task its server's stop ended is made again; one made but not recorded
// is cancelled.
func (s *Service) task(ctx context.Context, rt store.Runtime, step Step, st *StepState, save func() bool) {
	ws := store.Workspace{ID: rt.WorkspaceID, OrgID: rt.OrgID}
	if st.TaskID != "" {
		// Resumed: wait for the task the step made, unless the server
		// running it stopped, which ended it without an outcome.
		if tk, err := s.tasks.Get(ctx, ws, st.TaskID); err == nil && task.Interrupted(tk) {
			st.TaskID = ""
		}
	}
	if st.TaskID == "" {
		_, tasks, err := s.tasks.Create(ctx, ws, task.Request{Source: rt, Argv: step.Argv, Prompt: step.Prompt, Harness: step.Harness,
			Model: step.Model, Score: step.Score, Timeout: time.Duration(step.TimeoutSeconds) * time.Second, Count: 1})
		if err != nil {
			s.fail(st, err)
			return
		}
		st.TaskID = tasks[0].ID
		if !save() {
			_, _ = s.tasks.Cancel(context.WithoutCancel(ctx), ws, st.TaskID)
			return
		}
	}
	t := time.NewTicker(s.poll / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errCancelled) {
				_, _ = s.tasks.Cancel(context.WithoutCancel(ctx), ws, st.TaskID)
			}
			return
		case <-t.C:
		}
		tk, err := s.tasks.Get(ctx, ws, st.TaskID)
		if err != nil {
			if ctx.Err() == nil {
				s.fail(st, err)
			}
			return
		}
		if store.TaskFinal(tk.Status) {
			taskResult(tk, st)
			return
		}
	}
}

// taskResult records an ended task's outcome as its step's.
func taskResult(tk task.Task, st *StepState) {
	res := tk.Result
	st.ExitCode, st.Score, st.Result = res.ExitCode, res.Score, res.Answer
	st.Stdout, st.StdoutTruncated, st.Stderr, st.StderrTruncated = res.Stdout, res.StdoutTruncated, res.Stderr, res.StderrTruncated
	st.Status = StepSucceeded
	if tk.Status != store.TaskSucceeded {
		st.Status, st.Error, st.ErrorCode = StepFailed, cmp.Or(res.Error, "the task ended "+tk.Status), "task_"+tk.Status
	}
}

// cut bounds a result's text.
func cut(s string) string {
	if len(s) <= maxResultLength {
		return s
	}
	return s[:maxResultLength]
}

func itoa(n int) string { return fmt.Sprint(n) }
