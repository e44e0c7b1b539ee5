package server

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fleetevents"
	"github.com/paddockhq/paddock/internal/runtime"
)

// eventsPart is the events component's instance.
type eventsPart struct {
	hub      *fleetevents.Hub
	runtimes *runtime.Service
}

// eventsComponent is the fleet's live events (GET /api/v1/events): a hub
// that follows the runtime service's transitions and provisions and the
// egress proxy's decisions, and on a store replicas share hears the other
// replicas' through the store (PostgreSQL's LISTEN/NOTIFY). It starts
// listening before the API serves, and closes after the API has stopped.
func (w *wiring) eventsComponent() component.Registration {
	return component.Def[*eventsPart]{
		Name:     eventsName,
		Requires: []string{storeName, runtimeName, egressName},
		Init: func(_ context.Context, ic *component.InitContext) (*eventsPart, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			e, err := component.Get[*egressPart](ic, egressName)
			if err != nil {
				return nil, err
			}
			sec, err := component.SectionOf[*config.EventsConfig](ic)
			if err != nil {
				return nil, err
			}
			cfg := fleetevents.Config{Replica: w.replica, Rows: in.st, Logger: in.logger.With("component", "events")}
			if bus, ok := in.st.(fleetevents.Bus); ok {
				cfg.Bus = bus
			}
			hub := fleetevents.New(cfg)
			e.gate.Observe(hub.Egress)
			w.mount(api.Events(hub, sec.EventsHeartbeat))
			return &eventsPart{hub: hub, runtimes: rp.svc}, nil
		},
		Start: func(ctx context.Context, e *eventsPart) error {
			// It waits for its first LISTEN, bounded: a replica whose
			// listener fails goes on trying in the background.
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			e.hub.Start(sctx, e.runtimes)
			return nil
		},
		Close: func(_ context.Context, e *eventsPart) error {
			e.hub.Close()
			return nil
		},
	}.Registration()
}
