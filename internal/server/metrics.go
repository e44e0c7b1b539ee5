package server

import (
	"context"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/store"
)

// metricsComponent is the registry every component records into, with
// the gauges read from the store at scrape time; it mounts GET /metrics
// and the recording of every request.
func (w *wiring) metricsComponent() component.Registration {
	return component.Def[*metrics.Metrics]{
		Name:     metricsName,
		Requires: []string{storeName},
		Init: func(_ context.Context, ic *component.InitContext) (*metrics.Metrics, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			m := metrics.New()
			registerGauges(m, in.st)
			registerReplica(m, in.leases)
			w.mount(api.Metrics(m))
			return m, nil
		},
	}.Registration()
}

// registerGauges adds the metrics read from the store at scrape time:
// sandboxes by state and provider, and warm pools by template and state.
func registerGauges(m *metrics.Metrics, st store.Store) {
	m.Register(
		metrics.NewGauges("paddock_sandboxes", "Sandboxes that are not killed, by provider and state.",
			[]string{"provider", "state"}, func(ctx context.Context) ([]metrics.Sample, error) {
				cs, err := st.CountSandboxes(ctx)
				out := make([]metrics.Sample, len(cs))
				for i, c := range cs {
					out[i] = metrics.Sample{Labels: []string{c.Provider, string(c.State)}, Value: float64(c.Count)}
				}
				return out, err
			}),
		metrics.NewGauges("paddock_warm_pool_sandboxes", "Warm sandboxes, by template and state (creating, ready).",
			[]string{"template", "state"}, func(ctx context.Context) ([]metrics.Sample, error) {
				ws, err := st.ListWarmSandboxes(ctx)
				n := map[[2]string]int{}
				for _, w := range ws {
					n[[2]string{w.Template, string(w.State)}]++
				}
				out := make([]metrics.Sample, 0, len(n))
				for k, v := range n {
					out = append(out, metrics.Sample{Labels: []string{k[0], k[1]}, Value: float64(v)})
				}
				return out, err
			}),
	)
}

// registerReplica adds the replica's series: paddock_replica_info, always
// 1, whose label is the replica's id (an info metric, as go_info: a query
// joins it to any series of the same target, and no other series carries
// the id), and paddock_lease_held, 1 for each lease of a loop this
// replica runs that it holds, 0 for one it waits for.
func registerReplica(m *metrics.Metrics, leases *lease.Elector) {
	m.Register(
		metrics.NewGauges("paddock_replica_info", "The replica that serves these metrics: its id (replica_id) as a label; always 1.",
			[]string{"replica"}, func(context.Context) ([]metrics.Sample, error) {
				return []metrics.Sample{{Labels: []string{leases.Replica()}, Value: 1}}, nil
			}),
		metrics.NewGauges("paddock_lease_held", "The leases of the background loops this replica runs: 1 held (it runs the loop), 0 waited for (another replica does).",
			[]string{"lease"}, func(context.Context) ([]metrics.Sample, error) {
				var out []metrics.Sample
				for _, name := range leases.Names() {
					v := 0.0
					if leases.Holds(name) {
						v = 1
					}
					out = append(out, metrics.Sample{Labels: []string{name}, Value: v})
				}
				return out, nil
			}),
	)
}
