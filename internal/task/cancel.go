package task

import (
	"context"
	"errors"
	"fmt"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// CodeFinished refuses to cancel a task that has ended.
const CodeFinished = "task_finished"

// Cancel cancels the task id of ws: a pending one never runs; a running
// one's sandbox is killed (as deleted) and the task ends cancelled, with
// the output it had, before Cancel returns. A task that has ended answers 409 task_finished.
func (s *Service) Cancel(ctx context.Context, ws store.Workspace, id string) (Task, error) {
	t, err := s.Get(ctx, ws, id)
	if err != nil {
		return t, err
	}
	if store.TaskFinal(t.Status) {
		return t, errdefs.Conflict(CodeFinished, "task %s has ended (%s); there is nothing to cancel", id, t.Status)
	}
	from := t.Status
	t.Status = store.TaskCancelled
	ok, err := s.write(ctx, t, from)
	if err != nil {
		return t, err
	}
	if !ok {
		return s.Cancel(ctx, ws, id) // it moved on meanwhile: decide again
	}
	s.mu.Lock()
	r := s.running[id]
	s.mu.Unlock()
	switch {
	case r != nil:
		// Its runner kills the sandbox and records the end; the answer
		// waits for that, unless the caller leaves first.
		r.cancel(errCancelled)
		select {
		case <-r.done:
		case <-ctx.Done():
		}
	case from == store.TaskRunning:
		// Run by another server: its sandbox is killed here, its runner
		// finds the task cancelled.
		if _, err := s.runtimes.EndTaskSandbox(ctx, t.SandboxID, runtime.KillDeleted); err != nil && !errdefs.IsNotFound(err) {
			return t, err
		}
	}
	return s.Get(ctx, ws, id)
}

// Reconcile ends the tasks a stopped server left pending or running: each
// is failed, and the sandbox it names is killed as interrupted (its
// compute destroyed; a row never made is nothing to kill). The server
// calls it as it starts, before it runs any task: it ends this replica's
// own tasks (it left them when it stopped), those of no known runner, and
// those of replicas whose presence has lapsed; a live replica's are left
// to it. A task whose sandbox cannot be ended is left for the next pass
// and the others are ended: the error then wraps lease.ErrRowsLeft.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	return s.reconcile(ctx, true)
}

// Sweep ends, as Reconcile does, the tasks whose runner is gone (its
// presence lapsed), while this replica runs: it leaves its own, every
// live replica's, and those of no known runner (an older replica's, in a
// rolling upgrade). Without Replicas it ends nothing.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	if s.replicas == nil {
		return 0, nil
	}
	return s.reconcile(ctx, false)
}

// reconcile ends the unfinished tasks that are orphaned; restart: this
// replica's own and the unknown are too. Each task's sandbox is killed
// first, then its end written, only from the status it was decided on:
// the kill is versioned and ends a row killed already as it is, so a pass
// cut short between the two ends the task at the next pass, two replicas
// that reconcile at once end it once, and a runner that comes back finds
// its sandbox gone and its task failed.
func (s *Service) reconcile(ctx context.Context, restart bool) (int, error) {
	// The tasks first, then the presences: a task's runner announced
	// itself before it made the task, so it reads live unless it lapsed.
	left, err := s.store.ListUnfinishedTasks(ctx)
	if err != nil {
		return 0, err
	}
	var runners lease.Runners
	if s.replicas != nil {
		if runners, err = s.replicas.Runners(ctx); err != nil {
			return 0, err
		}
	}
	n := 0
	var errs []error
	for _, row := range left {
		if !runners.Orphaned(row.Runner, restart) {
			continue
		}
		ended, err := s.endOrphan(ctx, row)
		if err != nil {
			s.logger.ErrorContext(ctx, "a task its server left unfinished could not be ended; the next pass tries again", "task", row.ID, "sandbox", row.SandboxID, "runner", row.Runner, "err", err)
			errs = append(errs, fmt.Errorf("task %s: %w", row.ID, err))
			continue
		}
		if ended {
			n++
		}
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("%w: %w", lease.ErrRowsLeft, errors.Join(errs...))
	}
	return n, nil
}

// endOrphan kills the sandbox of the orphaned task row, then fails it
// from the status it was in; it reports whether this pass recorded the
// end (false: it ended meanwhile, by its runner or another pass).
func (s *Service) endOrphan(ctx context.Context, row store.Task) (bool, error) {
	t, err := Decode(row)
	if err != nil {
		return false, err
	}
	if t.SandboxID != "" {
		if _, err := s.runtimes.EndTaskSandbox(ctx, t.SandboxID, runtime.KillInterrupted); err != nil && !errdefs.IsNotFound(err) {
			return false, err
		}
	}
	from := t.Status
	t.Status = store.TaskFailed
	t.Result.Error = reasonRestarted
	t.Result.FinishedAt = s.now().UTC()
	ok, err := s.write(ctx, t, from)
	if ok {
		s.logger.WarnContext(ctx, "failed a task its server left unfinished", "task", t.ID, "sandbox", t.SandboxID, "runner", t.Runner)
	}
	return ok, err
}

// Batch is a summary of one batch of tasks.
type Batch struct {
	ID          string
	Count       int
	Concurrency int
	Statuses    map[string]int // how many tasks are in each status
	Tasks       []Task
}

// BatchOf summarizes the batch id of ws.
func (s *Service) BatchOf(ctx context.Context, ws store.Workspace, id string) (Batch, error) {
	tasks, _, err := s.List(ctx, ws, id, store.Page{Limit: MaxCount})
	if err != nil {
		return Batch{}, err
	}
	if len(tasks) == 0 {
		return Batch{}, errdefs.NotFound("task_batch_not_found", "batch %s not found", id)
	}
	b := Batch{ID: id, Count: len(tasks), Concurrency: tasks[0].Spec.Concurrency, Statuses: map[string]int{}, Tasks: tasks}
	for _, t := range tasks {
		b.Statuses[t.Status]++
	}
	return b, nil
}
