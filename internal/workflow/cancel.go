package workflow

import (
	"context"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Cancel cancels w's run (its newest when id is ""): its step running is
// cancelled, and the steps after it skipped. The run's answer waits for
// its runner here to stop the step (an exec step's process is killed, a
// task step's task cancelled). A run that has ended answers 409
// workflow_run_finished. Runs started later by the schedule still run.
func (s *Service) Cancel(ctx context.Context, w Workflow, id string) (Run, error) {
	run, err := s.pick(ctx, w, id)
	if err != nil {
		return run, err
	}
	if store.WorkflowFinal(run.Status) {
		return run, errdefs.Conflict(CodeFinished, "run %s of workflow %s has ended (%s); there is nothing to cancel", run.ID, w.Name, run.Status)
	}
	from := run.Status
	now := s.now()
	for i := range run.State.Steps {
		switch st := &run.State.Steps[i]; st.Status {
		case StepRunning:
			st.Status, st.FinishedAt = StepCancelled, now
		case StepPending:
			st.Status = StepSkipped
		}
	}
	run.Status, run.State.FinishedAt = store.WorkflowCancelled, now
	if !s.write(ctx, &run, from) {
		return s.Cancel(ctx, w, run.ID) // it moved on meanwhile: decide again
	}
	s.mu.Lock()
	r := s.running[run.ID]
	s.mu.Unlock()
	if r != nil {
		r.cancel(errCancelled)
		select {
		case <-r.done:
		case <-ctx.Done():
		}
	}
	return s.RunOf(ctx, w, run.ID)
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
