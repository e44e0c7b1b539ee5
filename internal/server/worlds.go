package server

import (
	"context"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/world"
)

// worldsComponent runs worlds, sets of sandboxes of kind world on one
// private network made through the runtime service; it mounts their
// routes. Its Start reconciles the worlds a stopped server left starting,
// deleting, or running with a member gone, and removes the world networks
// no world owns, before any world is made; its Close refuses new worlds
// (the worlds that run are not this server's processes and keep running).
func (w *wiring) worldsComponent() component.Registration {
	return component.Def[*world.Service]{
		Name:     worldsName,
		Requires: []string{storeName, runtimeName},
		Init: func(_ context.Context, ic *component.InitContext) (*world.Service, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			s := world.New(world.Config{Store: in.st, Runtimes: rp.svc, Logger: in.logger.With("component", "worlds"), Now: w.now})
			w.mount(api.Worlds(s))
			return s, nil
		},
		Start: func(ctx context.Context, s *world.Service) error {
			_, err := s.Reconcile(ctx)
			return err
		},
		Close: func(_ context.Context, s *world.Service) error { return s.Close() },
	}.Registration()
}
