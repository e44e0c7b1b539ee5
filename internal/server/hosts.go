package server

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
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

// hostTeardown is the loop that tears down idle machines.
type hostTeardown struct {
	hosts  *host.Service
	rts    host.Runtimes
	every  time.Duration
	cancel context.CancelFunc
	done   chan struct{}
}

// hostTeardownComponent tears down the machines orgs brought once they
// have been idle for their idle_teardown, archiving what paddock has on
// them through the runtime service; it stops before the runtime service
// closes.
func (w *wiring) hostTeardownComponent() component.Registration {
	return component.Def[*hostTeardown]{
		Name:     hostTeardownName,
		Requires: []string{hostsName, runtimeName},
		Init: func(_ context.Context, ic *component.InitContext) (*hostTeardown, error) {
			hs, err := component.Get[*host.Service](ic, hostsName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			cfg, err := component.SectionOf[*config.HostTeardownConfig](ic)
			if err != nil {
				return nil, err
			}
			return &hostTeardown{hosts: hs, rts: rp.svc, every: cfg.HostTeardownEvery, done: make(chan struct{})}, nil
		},
		Start: func(_ context.Context, ht *hostTeardown) error {
			ctx, cancel := context.WithCancel(context.Background())
			ht.cancel = cancel
			go func() {
				defer close(ht.done)
				ht.hosts.Run(ctx, ht.rts, ht.every)
			}()
			return nil
		},
		Close: func(_ context.Context, ht *hostTeardown) error {
			if ht.cancel != nil {
				ht.cancel()
				<-ht.done
			}
			return nil
		},
	}.Registration()
}
