package runtime

import (
	"context"
	"slices"

	"github.com/paddockhq/paddock/internal/store"
)

// SetPortPublic marks a port of the runtime's sandbox public (its preview
// answers without a credential) or private. It runs under the runtime's
// lock on the runtime as it is then, so a start, pause or configuration
// change running at the same time neither undoes it nor is undone by it.
// It writes the configuration only; when another server on the same
// database wrote the row first (a start, another port), the change is
// made again on the row as that server left it, so both are kept.
func (s *Service) SetPortPublic(ctx context.Context, runtimeID string, port int, public bool) (store.Runtime, error) {
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		return writeRuntime(ctx, s.store, rt, nil, func(rt store.Runtime) (store.Runtime, error) {
			return s.store.SetRuntimeConfig(ctx, rt.ID, rt.Version, withPort(rt.Config, port, public), s.now())
		})
	})
}

// withPort is c with port among its public ports, or not.
func withPort(c store.RuntimeConfig, port int, public bool) store.RuntimeConfig {
	ports := slices.DeleteFunc(slices.Clone(c.PublicPorts), func(p int) bool { return p == port })
	if public {
		ports = append(ports, port)
		slices.Sort(ports)
	}
	if len(ports) == 0 {
		ports = nil
	}
	c.PublicPorts = ports
	return c
}
