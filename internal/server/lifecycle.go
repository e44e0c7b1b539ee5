package server

import (
	"context"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/lifecycle"
)

// automation is the lifecycle component's instance: the goroutine that
// reconciles at start, then runs the rounds, once the server starts.
type automation struct {
	// run is what the goroutine does; nil: nothing runs (the test
	// drives the runtimes).
	run  func(ctx context.Context)
	stop context.CancelFunc
	// done is closed when the goroutine returns; nil until it starts.
	done chan struct{}
}

// lifecycleComponent holds every live runtime for a start-up
// reconciliation, so a restart after a crash acts only on a ledger and
// providers that agree: actions on a held runtime answer 503 reconciling
// until it is reached, while everything else is served. Init only holds
// them; once the server starts, the reconciliation runs in the
// background, several runtimes at once; then expiry, archiving and
// periodic reconciliation, stopped before the runtime service and the
// store close.
func (w *wiring) lifecycleComponent() component.Registration {
	return component.Def[*automation]{
		Name:     lifecycleName,
		Requires: []string{storeName, runtimeName},
		Init:     w.initLifecycle,
		Start: func(ctx context.Context, a *automation) error {
			a.start(ctx)
			return nil
		},
		Close: func(_ context.Context, a *automation) error {
			a.close()
			return nil
		},
	}.Registration()
}

func (w *wiring) initLifecycle(ctx context.Context, ic *component.InitContext) (*automation, error) {
	if w.o.Manual {
		return &automation{}, nil // the test drives the runtimes
	}
	cfg, err := component.SectionOf[*config.LifecycleConfig](ic)
	if err != nil {
		return nil, err
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
		Store: in.st, Runtimes: rp.svc, Logger: logger, Concurrency: cfg.ReconcileConcurrency,
	})
	if err := life.Hold(ctx); err != nil {
		return nil, fmt.Errorf("list runtimes to reconcile: %w", err)
	}
	return &automation{run: func(ctx context.Context) {
		t0 := time.Now()
		rep, err := life.Reconcile(ctx)
		rp.svc.ReleaseHeld()
		if err != nil {
			in.logger.Error("start-up reconciliation", "err", err)
		}
		in.logger.Info("start-up reconciliation", "reconciled", len(rep.Reconciled), "orphans_removed", len(rep.Orphans), "took", time.Since(t0))
		life.Run(ctx)
	}}, nil
}

// start runs the automation in the background until close.
func (a *automation) start(ctx context.Context) {
	if a.run == nil {
		return
	}
	ctx, a.stop = context.WithCancel(context.WithoutCancel(ctx))
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		a.run(ctx)
	}()
}

// close stops the automation and waits for it, if it started.
func (a *automation) close() {
	if a.done == nil {
		return
	}
	a.stop()
	<-a.done
}
