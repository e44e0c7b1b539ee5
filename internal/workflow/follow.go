package workflow

import (
	"context"
	"reflect"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// Event is one event of a followed run: a step whose state changed (Step
// and Index set), or the run's own status (Type "run"), the last one
// once the run has ended.
type Event struct {
	Type   string // "step" or "run"
	RunID  string
	Status string // the run's status
	Index  int
	Step   *StepState
	Time   time.Time
}

// followPoll is how often Follow reads the run: it reads the store, so it
// follows a run whichever replica runs it.
const followPoll = 250 * time.Millisecond

// Follow sends w's run (its newest for id "") as events until it ends or
// ctx does: first the run's status and every step as it stands, then each
// step whose state changes, and last the run's final status. It returns
// send's error, or ctx's.
func (s *Service) Follow(ctx context.Context, w Workflow, id string, send func(Event) error) error {
	run, err := s.pick(ctx, w, id)
	if err != nil {
		return err
	}
	if err := send(Event{Type: "run", RunID: run.ID, Status: run.Status, Time: s.now()}); err != nil {
		return err
	}
	var seen []StepState
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		for i := range run.State.Steps {
			st := run.State.Steps[i]
			if i < len(seen) && reflect.DeepEqual(seen[i], st) {
				continue
			}
			if err := send(Event{Type: "step", RunID: run.ID, Status: run.Status, Index: i, Step: &st, Time: s.now()}); err != nil {
				return err
			}
		}
		seen = run.State.Steps
		if store.WorkflowFinal(run.Status) {
			return send(Event{Type: "run", RunID: run.ID, Status: run.Status, Time: s.now()})
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if run, err = s.RunOf(ctx, w, run.ID); err != nil {
			return err
		}
	}
}
