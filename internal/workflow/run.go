package workflow

import (
	"context"
	"errors"

	"github.com/paddockhq/paddock/internal/store"
)

// runOne runs row's remaining steps in order and records each as it
// starts and ends. A step left running by a server that stopped is run
// again. It returns without a final write when ctx ends for any other
// reason than a cancel (the run is resumed by the next holder).
func (s *Service) runOne(ctx context.Context, row store.WorkflowRun) {
	run, err := DecodeRun(row)
	if err != nil {
		s.logError(ctx, "reading a workflow run", row.ID, err)
		return
	}
	w, err := s.store.GetWorkflow(ctx, run.WorkflowID)
	if err == nil {
		var wf Workflow
		if wf, err = Decode(w); err == nil {
			s.steps(ctx, wf, run)
			return
		}
	}
	if ctx.Err() == nil {
		s.logError(ctx, "reading a run's workflow", run.WorkflowID, err)
	}
}

// steps runs run's steps of w from the first not yet ended.
func (s *Service) steps(ctx context.Context, w Workflow, run Run) {
	if run.Status == store.WorkflowPending {
		run.Status, run.State.StartedAt = store.WorkflowRunning, s.now()
		if !s.write(ctx, &run, store.WorkflowPending) {
			return
		}
	}
	for i := range run.State.Steps {
		st := &run.State.Steps[i]
		if st.Status != StepPending && st.Status != StepRunning {
			continue
		}
		if i >= len(w.Spec.Steps) {
			break
		}
		step := w.Spec.Steps[i]
		attempts, taskID := st.Attempts, ""
		if st.Status == StepRunning && step.Type == StepTask {
			taskID = st.TaskID // cut short: wait for its task, not another
		}
		*st = StepState{Name: step.Name, Type: step.Type, Status: StepRunning, Attempts: attempts + 1, StartedAt: s.now(), TaskID: taskID}
		if !s.write(ctx, &run, store.WorkflowRunning) {
			return
		}
		s.step(ctx, w, step, st, func() bool { return s.write(ctx, &run, store.WorkflowRunning) })
		if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errCancelled) {
			return // cut short: resumed from this step
		}
		st.FinishedAt = s.now()
		if errors.Is(context.Cause(ctx), errCancelled) {
			st.Status = StepCancelled
			s.end(ctx, &run, i+1, store.WorkflowCancelled, store.WorkflowCancelled)
			return
		}
		if st.Status == StepFailed && !step.ContinueOnError {
			run.State.Error = "step " + step.Name + " failed"
			s.end(ctx, &run, i+1, store.WorkflowFailed, store.WorkflowRunning)
			return
		}
		if !s.write(ctx, &run, store.WorkflowRunning) {
			return
		}
	}
	s.end(ctx, &run, len(run.State.Steps), store.WorkflowSucceeded, store.WorkflowRunning)
}

// end records run's end in status, the steps from index from on
// skipped, from the status it was in.
func (s *Service) end(ctx context.Context, run *Run, from int, status, was string) {
	for i := from; i < len(run.State.Steps); i++ {
		if run.State.Steps[i].Status == StepPending {
			run.State.Steps[i].Status = StepSkipped
		}
	}
	run.Status, run.State.FinishedAt = status, s.now()
	s.write(context.WithoutCancel(ctx), run, was)
}

// write stores run from the status it was decided on and reports
// whether it landed; one that did not was cancelled meanwhile (or is
// run by another holder), and its runner stops. An error is logged and
// reads as not landed.
func (s *Service) write(ctx context.Context, run *Run, from string) bool {
	ok, err := s.save(ctx, run, from)
	if err != nil {
		s.logError(ctx, "recording a workflow run", run.ID, err)
	}
	return ok
}

// save stores run if the stored run is still in status from at the
// version run was read at, and moves run's version on when it landed.
func (s *Service) save(ctx context.Context, run *Run, from string) (bool, error) {
	if err := run.encode(); err != nil {
		return false, err
	}
	ok, err := s.store.UpdateWorkflowRun(context.WithoutCancel(ctx), run.WorkflowRun, from)
	if ok {
		run.Version++
	}
	return ok, err
}
