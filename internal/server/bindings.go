package server

import (
	"context"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/component"
)

// bindingsComponent keeps what agents bring into their runtimes: the
// orgs' capability inventories and the runtimes' bindings, applied to
// every sandbox as it begins to run. It mounts their routes, and stops
// before the runtime service and the store.
func (w *wiring) bindingsComponent() component.Registration {
	return component.Def[*binding.Service]{
		Name:     bindingsName,
		Requires: []string{storeName, runtimeName},
		Init: func(_ context.Context, ic *component.InitContext) (*binding.Service, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			b := binding.New(binding.Config{Store: in.st, Runtimes: rp.svc, Logger: in.logger.With("component", "capabilities"), Now: w.now})
			w.mount(api.Capabilities(b))
			return b, nil
		},
		Close: func(_ context.Context, b *binding.Service) error {
			b.Close()
			return nil
		},
	}.Registration()
}
