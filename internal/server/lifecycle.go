package server

import (
	"context"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/lifecycle"
)

// automation is the lifecycle component's instance: the goroutine that
// reconciles at start, then runs the rounds.
type automation struct {
	stop context.CancelFunc
	done chan struct{}
}

// stopped is automation that does not run.
func stopped() *automation {
	a := &automation{stop: func() {}, done: make(chan struct{})}
	close(a.done)
	return a
}

// lifecycleComponent holds every live runtime for a start-up
// reconciliation, so a restart after a crash acts only on a ledger and
// providers that agree: actions on a held runtime answer 503 reconciling
// until it is reached, while everything else is served. The
// reconciliation runs in the background, several runtimes at once; then
// expiry, archiving and periodic reconciliation, stopped before the
// runtime service and the store close.
func (w *wiring) lifecycleComponent() component.Registration {
	return component.Def[*automation]{
		Name:     lifecycleName,
		Requires: []string{storeName, runtimeName},
		Init: func(ctx context.Context, ic *component.InitContext) (*automation, error) {
			if w.o.Manual {
				return stopped(), nil // the test drives the runtimes
			}
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			logger := in.logger.With("component", "lifecycle")
			life := lifecycle.New(lifecycle.Config{
				Store: in.st, Runtimes: rp.svc, Logger: logger, Concurrency: w.cfg.ReconcileConcurrency,
			})
			if err := life.Hold(ctx); err != nil {
				return nil, fmt.Errorf("list runtimes to reconcile: %w", err)
			}
			lifeCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
			a := &automation{stop: stop, done: make(chan struct{})}
			go func() {
				defer close(a.done)
				t0 := time.Now()
				rep, err := life.Reconcile(lifeCtx)
				rp.svc.ReleaseHeld()
				if err != nil {
					in.logger.Error("start-up reconciliation", "err", err)
				}
				in.logger.Info("start-up reconciliation", "reconciled", len(rep.Reconciled), "orphans_removed", len(rep.Orphans), "took", time.Since(t0))
				life.Run(lifeCtx)
			}()
			return a, nil
		},
		Close: func(_ context.Context, a *automation) error {
			a.stop()
			<-a.done
			return nil
		},
	}.Registration()
}
