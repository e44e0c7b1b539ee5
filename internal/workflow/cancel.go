package workflow

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Cancel cancels w's run (its newest when id is ""): its step running is
// cancelled, and the steps after it skipped. The run's answer waits for
// its runner here, if it runs here, to stop the step (an exec step's
// process is killed, a task step's task cancelled); a runner on another
// replica stops it at its loop's next poll (stopCancelled). A run that
// has ended answers 409 workflow_run_finished. Runs started later by the
// schedule still run.
func (s *Service) Cancel(ctx context.Context, w Workflow, id string) (Run, error) {
	for range cancelTries {
		run, err := s.pick(ctx, w, id)
		if err != nil {
			return run, err
		}
		if store.WorkflowFinal(run.Status) {
			return run, errdefs.Conflict(CodeFinished, "run %s of workflow %s has ended (%s); there is nothing to cancel", run.ID, w.Name, run.Status)
		}
		id = run.ID
		ok, err := s.save(ctx, cancelled(run, s.now()), run.Status)
		if err != nil {
			return run, err
		}
		if !ok {
			continue // it moved on meanwhile: decide again
		}
		s.stopRunner(ctx, run.ID)
		return s.RunOf(ctx, w, run.ID)
	}
	return Run{}, errdefs.Unavailable("workflow_run_busy", "run %s of workflow %s kept changing; cancel it again", id, w.Name)
}

// cancelTries bounds how often Cancel decides again on a run that moved.
const cancelTries = 20

// cancelled is run as a cancel leaves it, at now.
func cancelled(run Run, now time.Time) *Run {
	for i := range run.State.Steps {
		switch st := &run.State.Steps[i]; st.Status {
		case StepRunning:
			st.Status, st.FinishedAt = StepCancelled, now
		case StepPending:
			st.Status = StepSkipped
		}
	}
	run.Status, run.State.FinishedAt = store.WorkflowCancelled, now
	return &run
}

// stopRunner cancels the runner of run id here, if any, and waits for it
// to stop (or for ctx).
func (s *Service) stopRunner(ctx context.Context, id string) {
	s.mu.Lock()
	r := s.running[id]
	s.mu.Unlock()
	if r == nil {
		return
	}
	r.cancel(errCancelled)
	select {
	case <-r.done:
	case <-ctx.Done():
	}
}

// stopCancelled stops the runners here whose run has ended in the store:
// cancelled through another replica.
func (s *Service) stopCancelled(ctx context.Context) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.running))
	for id := range s.running {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		row, err := s.store.GetWorkflowRun(ctx, id)
		if err == nil && store.WorkflowFinal(row.Status) {
			s.mu.Lock()
			r := s.running[id]
			s.mu.Unlock()
			if r != nil {
				r.cancel(errCancelled)
			}
		}
	}
}

// pick is w's run id, or its newest for "".
func (s *Service) pick(ctx context.Context, w Workflow, id string) (Run, error) {
	if id != "" {
		return s.RunOf(ctx, w, id)
	}
	run, ok, err := s.LastRun(ctx, w)
	if err == nil && !ok {
		err = errdefs.NotFound(CodeRunNotFound, "workflow %s has no run", w.Name)
	}
	return run, err
}

// Delete deletes w and its runs, cancelling its run in progress first.
func (s *Service) Delete(ctx context.Context, w Workflow) error {
	if run, ok, err := s.LastRun(ctx, w); err != nil {
		return err
	} else if ok && !store.WorkflowFinal(run.Status) {
		if _, err := s.Cancel(ctx, w, run.ID); err != nil && !errdefs.IsConflict(err) {
			return err
		}
	}
	if err := s.store.DeleteWorkflow(ctx, w.ID); err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	return nil
}
