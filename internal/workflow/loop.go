package workflow

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

var errCancelled = errors.New("workflow run cancelled")

// Loop runs workflows until ctx ends: the server calls it under the
// workflows lease, so one replica runs them. Every Poll (or at once when
// a workflow is made here) it starts the runs a schedule has made due and
// runs every pending run and every run left running (resumed where it
// stopped), and stops its runners whose run was cancelled elsewhere. When ctx ends (the lease lost, the server stopping) the runs
// here stop where they are, their state left for the next holder, and
// Loop returns once they have.
func (s *Service) Loop(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(s.poll)
	defer t.Stop()
	for {
		s.scheduleDue(ctx)
		s.stopCancelled(ctx)
		s.startUnfinished(ctx, &wg)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// scheduleDue starts a run of each workflow whose schedule has made one
// due, and moves its next run on; a time missed (the server was down, or
// the previous run still runs) is skipped, not made up.
func (s *Service) scheduleDue(ctx context.Context) {
	now := s.now()
	due, err := s.store.ListDueWorkflows(ctx, now)
	if err != nil {
		s.logError(ctx, "listing scheduled workflows", "", err)
		return
	}
	for _, row := range due {
		if err := s.scheduleOne(ctx, row, now); err != nil {
			s.logError(ctx, "starting a scheduled run", row.ID, err)
		}
	}
}

// scheduleOne moves row's next run past now and, unless its last run is
// still unfinished, records a new pending run in the same transaction.
func (s *Service) scheduleOne(ctx context.Context, row store.Workflow, now time.Time) error {
	w, err := Decode(row)
	if err != nil {
		return err
	}
	var next time.Time
	if sched, err := ParseSchedule(w.Spec.Schedule); err == nil {
		next = sched.Next(now)
	}
	last, has, err := s.LastRun(ctx, w)
	if err != nil {
		return err
	}
	run, err := newRun(w, now)
	if err != nil {
		return err
	}
	return s.store.InTx(ctx, func(q store.Queries) error {
		ok, err := q.SetWorkflowNextRun(ctx, w.ID, w.NextRunAt, next)
		if err != nil || !ok || (has && !store.WorkflowFinal(last.Status)) {
			return err // another holder moved it, or its last run still runs
		}
		return q.CreateWorkflowRun(ctx, run.WorkflowRun)
	})
}

// startUnfinished starts a runner for each pending or running run that
// none runs here.
func (s *Service) startUnfinished(ctx context.Context, wg *sync.WaitGroup) {
	rows, err := s.store.ListUnfinishedWorkflowRuns(ctx)
	if err != nil {
		s.logError(ctx, "listing unfinished workflow runs", "", err)
		return
	}
	for _, row := range rows {
		s.mu.Lock()
		_, busy := s.running[row.ID]
		if busy || s.closed || ctx.Err() != nil {
			s.mu.Unlock()
			continue
		}
		rctx, cancel := context.WithCancelCause(ctx)
		r := &runner{cancel: cancel, done: make(chan struct{})}
		s.running[row.ID] = r
		s.mu.Unlock()
		wg.Go(func() {
			defer func() {
				cancel(nil)
				s.mu.Lock()
				delete(s.running, row.ID)
				s.mu.Unlock()
				close(r.done)
			}()
			s.runOne(rctx, row)
		})
	}
}

// Close stops making workflows here; the loop's context, ended by the
// server, stops the runs.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

func (s *Service) logError(ctx context.Context, what, id string, err error) {
	if ctx.Err() != nil {
		return
	}
	s.logger.ErrorContext(ctx, what, "workflow", id, "err", err)
}
