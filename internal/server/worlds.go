package server

import (
	"context"
	"errors"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/world"
)

// leaseWorlds: the sweep of the worlds whose runner is gone.
const leaseWorlds = "worlds"

// worldsPart is the worlds component's instance: the service, and the
// sweep that runs under its lease from the server's start to its close.
type worldsPart struct {
	svc   *world.Service
	sweep automation
}

// worldsComponent runs worlds, sets of sandboxes of kind world on one
// private network made through the runtime service; it mounts their
// routes. Its Start reconciles the worlds a stopped server left starting
// or deleting (this replica's own, and those of replicas whose presence
// has lapsed), or running with a member gone, and removes the world
// networks no world owns, before any world is made; then the replica that
// holds the worlds lease sweeps, every lease TTL, the creates and deletes
// of replicas that died since. Its Close stops the sweep and refuses new
// worlds (the worlds that run are not this server's processes and keep
// running).
func (w *wiring) worldsComponent() component.Registration {
	return component.Def[*worldsPart]{
		Name:     worldsName,
		Requires: []string{storeName, runtimeName},
		Init: func(_ context.Context, ic *component.InitContext) (*worldsPart, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			logger := in.logger.With("component", "worlds")
			s := world.New(world.Config{Store: in.st, Runtimes: rp.svc, Replicas: in.presence, Logger: logger, Now: w.now})
			w.mount(api.Worlds(s))
			p := &worldsPart{svc: s}
			if !w.o.Manual {
				p.sweep.run = in.sweepUnder(leaseWorlds, "worlds", s.Sweep, logger)
			}
			return p, nil
		},
		Start: func(ctx context.Context, p *worldsPart) error {
			// A row that could not be ended (logged) is left for a
			// sweep (a gone replica's) or the next start (this
			// replica's own); the server starts.
			if _, err := p.svc.Reconcile(ctx); err != nil && !errors.Is(err, lease.ErrRowsLeft) {
				return err
			}
			p.sweep.start(ctx)
			return nil
		},
		Close: func(_ context.Context, p *worldsPart) error {
			p.sweep.close()
			return p.svc.Close()
		},
	}.Registration()
}
