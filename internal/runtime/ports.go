package runtime

import (
	"context"
	"slices"

	"github.com/paddockhq/paddock/internal/store"
)

// SetPortPublic marks a port of the runtime's sandbox public (its preview
// answers without a credential) or private. It runs under the runtime's
// lock on the runtime as it is then, so a start, pause or configuration
// change running at the same time neither undoes it nor is undone by it;
// another server's write that lands first makes it 409 runtime_busy.
func (s *Service) SetPortPublic(ctx context.Context, runtimeID string, port int, public bool) (store.Runtime, error) {
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		ports := slices.DeleteFunc(slices.Clone(rt.Config.PublicPorts), func(p int) bool { return p == port })
		if public {
			ports = append(ports, port)
			slices.Sort(ports)
		}
		if len(ports) == 0 {
			ports = nil
		}
		rt.Config.PublicPorts = ports
		return s.store.UpdateRuntime(ctx, rt)
	})
}
