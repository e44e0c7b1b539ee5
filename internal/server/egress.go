package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/secrets"
)

// egressPart is the egress component's instance: the guard every
// runtime's rules are checked against, and the gate (the proxy and its
// networks; nil when egress is off or unavailable).
type egressPart struct {
	guard *egress.Guard
	gate  *egress.Gate
}

// egressComponent sets up the egress networks and proxy, before any
// sandbox starts. Without them (not root, no iptables) only the none mode
// is offered; a proxy that cannot serve on networks that are up fails the
// start.
func (w *wiring) egressComponent() component.Registration {
	return component.Def[*egressPart]{
		Name:     egressName,
		Requires: []string{storeName, providersName, secretsName},
		Init: func(ctx context.Context, ic *component.InitContext) (*egressPart, error) {
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
			cfg, err := component.SectionOf[*config.EgressConfig](ic)
			if err != nil {
				return nil, err
			}
			open, err := cfg.Egress.AllowInternalPrefixes()
			if err != nil {
				return nil, err
			}
			e := &egressPart{guard: egress.NewGuard(egress.GuardConfig{AllowInternal: open})}
			if cfg.Egress.Disabled {
				return e, nil
			}
			hosts, err := cfg.Egress.HostAddrs()
			if err != nil {
				return nil, err
			}
			e.gate, err = egress.StartGate(ctx, egress.GateConfig{
				Store: in.st, Providers: ps.reg, Guard: e.guard, Dir: filepath.Join(in.dataDir, "egress"),
				Hosts: hosts, UpstreamCAFile: cfg.Egress.UpstreamCAFile, BrokerPorts: cfg.Egress.BrokerPorts,
				Retention: cfg.Egress.Retention, Brokers: sec.Brokers, Fatal: fatalNetworkError,
				Logger: in.logger.With("component", "egress"),
			})
			if fe := (*egress.FatalError)(nil); errors.As(err, &fe) {
				return nil, fmt.Errorf("%w%s", err, inUseHint(err, "egress.proxy_port / PADDOCK_EGRESS_PROXY_PORT, or egress.disabled"))
			}
			if err != nil {
				in.logger.Error("egress: the proxy and open network modes are not available", "err", err)
			}
			return e, nil
		},
		Close: func(_ context.Context, e *egressPart) error {
			e.gate.Close()
			return nil
		},
	}.Registration()
}

// fatalNetworkError: a provider's networks belong to another installation,
// or its firewall fails. The server must not start then, rather than run
// without the proxy and open modes.
func fatalNetworkError(err error) bool {
	e, ok := errdefs.Public(err)
	return ok && (e.Code == docker.CodeNetworkForeign || e.Code == docker.CodeFirewallFailed)
}
