package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/lifecycle"
	"github.com/paddockhq/paddock/internal/runtime"
)

// automation is a goroutine that runs from the server's start to its
// close: the lifecycle component's instance, which reconciles at start
// then runs the rounds and fills the warm pools, and the ledger's settler.
type automation struct {
	// run is what the goroutine does; nil: nothing runs (the test
	// drives the runtimes).
	run  func(ctx context.Context)
	stop context.CancelFunc
	// done is closed when the goroutine returns; nil until it starts.
	done chan struct{}
}

// The leases of the background loops: each runs on the one replica of a
// store that holds its lease (internal/lease).
const (
	// leaseLifecycle: expiry and idle pause, archiving, and the
	// reconciliation, at start-up (when the lease is taken) and periodic.
	leaseLifecycle = "lifecycle"
	// leaseWarmPool: the warm pool's filler.
	leaseWarmPool = "warm-pool"
	// leaseSettle: the settler (the ledger component's).
	leaseSettle = "settle"
)

// lifecycleComponent holds every live runtime for a start-up
// reconciliation, so a restart after a crash acts only on a ledger and
// providers that agree: actions on a held runtime answer 503 reconciling
// until it is reached, while everything else is served. Init only holds
// them; once the server starts, the replica that holds the lifecycle
// lease reconciles in the background, several runtimes at once, then
// runs expiry, archiving and periodic reconciliation; the replica that
// holds the warm-pool lease fills the warm pools. Both stop before the
// runtime service and the store close.
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
		var wg sync.WaitGroup
		wg.Go(func() { in.leases.Run(ctx, leaseWarmPool, life.FillWarmPools) })
		wg.Go(func() { releaseHeldUnlessLeased(ctx, in, rp.svc) })
		in.leases.Run(ctx, leaseLifecycle, func(ctx context.Context) {
			t0 := time.Now()
			rp.svc.BeginReconcile()
			rep, err := life.Reconcile(ctx)
			rp.svc.ReleaseHeld()
			if err != nil {
				in.logger.Error("start-up reconciliation", "err", err)
			}
			in.logger.Info("start-up reconciliation", "reconciled", len(rep.Reconciled), "orphans_removed", len(rep.Orphans), "took", time.Since(t0))
			life.RunRounds(ctx)
		})
		wg.Wait()
	}}, nil
}

// releaseHeldUnlessLeased serves the runtimes held for reconciliation
// when, two TTLs after the start, another replica holds the lifecycle
// lease: a live replica then (a dead one's lease would have lapsed, and
// this one would have taken it), which reconciles them. A replica that
// takes the lease reconciles them itself and releases them then.
func releaseHeldUnlessLeased(ctx context.Context, in *installation, svc *runtime.Service) {
	t := time.NewTimer(2 * in.leases.TTL())
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
		if !in.leases.Holds(leaseLifecycle) && svc.Reconciling() {
			in.logger.Info("another replica holds the lifecycle lease and reconciles; serving the held runtimes")
			svc.ReleaseHeld()
		}
	}
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
