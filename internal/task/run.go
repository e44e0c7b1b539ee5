package task

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// runBatch runs tasks, at most limit at once: a task takes a slot before
// its sandbox is made and gives it back once its sandbox is killed.
func (s *Service) runBatch(tasks []Task, limit int) {
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, t := range tasks {
		took := true
		select {
		case slots <- struct{}{}:
		case <-s.base.Done():
			took = false // closing: the task is recorded as failed at once
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if took {
				defer func() { <-slots }()
			}
			s.run(t)
		}()
	}
	wg.Wait()
}

// run runs one task to its end and records it.
func (s *Service) run(t Task) {
	ctx, cancel := context.WithCancelCause(s.base)
	defer cancel(nil)
	r := &runner{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.running[t.ID] = r
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, t.ID)
		s.mu.Unlock()
		close(r.done)
	}()
	if ctx.Err() != nil {
		s.finish(ctx, t, store.TaskPending, store.TaskFailed, reasonRestarted)
		return
	}
	// The sandbox is named on the task before it exists: a server that
	// dies from here on leaves a task that says which row to kill.
	t.Status, t.SandboxID = store.TaskRunning, uuid.NewString()
	t.Result.StartedAt = s.now().UTC()
	if ok, err := s.write(ctx, t, store.TaskPending); err != nil || !ok {
		if err != nil {
			s.logger.Error("recording a task's start", "task", t.ID, "err", err)
		}
		return // cancelled while pending
	}
	limit := time.Duration(t.Spec.TimeoutSeconds) * time.Second
	src := store.Runtime{ID: t.Spec.RuntimeID, OrgID: t.OrgID, WorkspaceID: t.WorkspaceID, ProjectID: t.Spec.ProjectID, Config: t.Spec.Config}
	bound := limit + ScoreTimeout
	if t.Spec.SnapshotID != "" {
		bound += fillTimeout
	}
	sb, err := s.runtimes.StartTaskSandbox(ctx, t.SandboxID, src, bound)
	if err != nil {
		s.finish(ctx, t, store.TaskRunning, store.TaskFailed, publicText(err))
		return
	}
	status, reason := s.execute(ctx, sb, limit, &t)
	if _, err := s.runtimes.EndTaskSandbox(ctx, sb.ID, reason); err != nil {
		s.logger.Error("ending a task's sandbox", "task", t.ID, "sandbox", sb.ID, "err", err)
	}
	s.finish(ctx, t, store.TaskRunning, status, t.Result.Error)
}

// finish records t's end in status with its result, from the status it
// was in; a task cancelled meanwhile stays cancelled, with its result.
func (s *Service) finish(ctx context.Context, t Task, from, status, errText string) {
	if errors.Is(context.Cause(ctx), errCancelled) {
		status = store.TaskCancelled
	}
	t.Status = status
	t.Result.Error = errText
	t.Result.FinishedAt = s.now().UTC()
	ok, err := s.write(ctx, t, from)
	if err == nil && !ok {
		t.Status = store.TaskCancelled
		_, err = s.write(ctx, t, store.TaskCancelled)
	}
	if err != nil {
		s.logger.Error("recording a task's end", "task", t.ID, "err", err)
	}
}

// execute runs t's command, then its score command, in the running
// sandbox sb, recording what came of them in t.Result. It returns the
// task's status and the kill reason of its sandbox.
func (s *Service) execute(ctx context.Context, sb store.Sandbox, limit time.Duration, t *Task) (string, string) {
	agent, err := s.runtimes.TaskAgent(sb)
	if err == nil {
		err = s.fill(ctx, agent, t)
	}
	switch {
	case err != nil && errors.Is(context.Cause(ctx), errCancelled):
		return store.TaskCancelled, runtime.KillDeleted
	case err != nil && ctx.Err() != nil:
		t.Result.Error = reasonRestarted
		return store.TaskFailed, runtime.KillInterrupted
	case err != nil:
		t.Result.Error = publicText(err)
		return store.TaskFailed, runtime.KillFinished
	}
	st, stdout, stderr, err := runIn(ctx, agent, agentconn.ExecRequest{Argv: t.Spec.Argv, Env: t.Spec.Env, Cwd: workdir, Timeout: limit}, MaxOutputBytes)
	t.Result.Stdout, t.Result.StdoutTruncated = stdout.String(), stdout.Truncated
	t.Result.Stderr, t.Result.StderrTruncated = stderr.String(), stderr.Truncated
	switch {
	case errors.Is(context.Cause(ctx), errCancelled):
		return store.TaskCancelled, runtime.KillDeleted
	case ctx.Err() != nil:
		t.Result.Error = reasonRestarted
		return store.TaskFailed, runtime.KillInterrupted
	case err == nil && st.TimedOut, errors.Is(err, context.DeadlineExceeded):
		t.Result.Error = "the command did not end within its time limit"
		return store.TaskTimedOut, runtime.KillTimedOut
	case err != nil:
		t.Result.Error = "the command could not run: " + publicText(err)
		return store.TaskFailed, runtime.KillFinished
	}
	code := st.Code
	t.Result.ExitCode = &code
	if t.Spec.Prompt != "" {
		t.Result.Answer = answer(t.Spec.Harness, stdout.Bytes(), code, stderr.String())
	}
	if len(t.Spec.Score) > 0 {
		t.Result.Score, t.Result.ScoreError = score(ctx, agent, t.Spec.Score)
	}
	if code != 0 {
		return store.TaskFailed, runtime.KillFinished
	}
	return store.TaskSucceeded, runtime.KillFinished
}

// score runs argv and returns the JSON it printed, or why there is none.
func score(ctx context.Context, agent *agentconn.Client, argv []string) (json.RawMessage, string) {
	st, stdout, _, err := runIn(ctx, agent, agentconn.ExecRequest{Argv: argv, Cwd: workdir, Timeout: ScoreTimeout}, maxScoreBytes)
	out := bytes.TrimSpace(stdout.Bytes())
	switch {
	case err != nil:
		return nil, "the score command could not run: " + publicText(err)
	case st.TimedOut:
		return nil, "the score command did not end within its time limit"
	case st.Code != 0:
		return nil, "the score command exited with status " + itoa(st.Code)
	case stdout.Truncated:
		return nil, "the score command printed more than the score's limit of 64 KiB"
	case len(out) == 0 || !json.Valid(out):
		return nil, "the score command did not print valid JSON"
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, out)
	return compact.Bytes(), ""
}

// runIn runs req (its Timeout the limit) in the sandbox of agent,
// keeping max bytes of each stream.
func runIn(ctx context.Context, agent *agentconn.Client, req agentconn.ExecRequest, max int) (agentconn.ExitStatus, *agentconn.LimitedBuffer, *agentconn.LimitedBuffer, error) {
	stdout, stderr := &agentconn.LimitedBuffer{Max: max}, &agentconn.LimitedBuffer{Max: max}
	// The agent kills the process at the limit; the context is the
	// bound on a link that stops answering.
	ctx, cancel := context.WithTimeout(ctx, req.Timeout+30*time.Second)
	defer cancel()
	es, err := agent.Exec(ctx, req)
	if err != nil {
		return agentconn.ExitStatus{}, stdout, stderr, err
	}
	st, err := es.Wait(stdout, stderr)
	return st, stdout, stderr, err
}

// publicText is an error's public message, never its cause's text.
func publicText(err error) string {
	if pe, ok := errdefs.Public(err); ok {
		return pe.Message
	}
	return "an internal error"
}

// answer reads the last assistant message of a harness turn from its
// stream on stdout, as a session would.
func answer(name string, stdout []byte, exitCode int, stderr string) string {
	h, ok := harness.Lookup(name)
	if !ok {
		return ""
	}
	p := h.NewParser()
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		p.Feed(line)
	}
	for _, ev := range p.Finish(exitCode, stderr) {
		if ev.Done != nil {
			return ev.Done.Result
		}
	}
	return ""
}
