package server

import (
	"context"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/host"
	"github.com/paddockhq/paddock/internal/secrets"
)

// hostsComponent keeps the machines orgs bring: it registers each stored
// one's provider for its org (before the runtime service reconciles their
// sandboxes) and mounts their routes; its Close closes their connections.
func (w *wiring) hostsComponent() component.Registration {
	return component.Def[*host.Service]{
		Name:     hostsName,
		Requires: []string{storeName, providersName, secretsName},
		Init: func(ctx context.Context, ic *component.InitContext) (*host.Service, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			ps, err := component.Get[*providerSet](ic, providersName)
			if err != nil {
				return nil, err
			}
			sec, err := component.Get[*secrets.Service](ic, secretsName)
			if err != nil {
				return nil, err
			}
			s := host.New(host.Config{
				Store: in.st, Keys: sec.Keyring(), Providers: ps.reg,
				Shim:     func() (string, error) { return findShim(ps.shimPath) },
				Instance: in.id, PullImages: ps.pullImages,
				Logger: in.logger.With("component", "hosts"), Now: w.now,
			})
			if err := s.Load(ctx); err != nil {
				return nil, err
			}
			w.mount(api.Hosts(s))
			return s, nil
		},
		Close: func(_ context.Context, s *host.Service) error { return s.Close() },
	}.Registration()
}
