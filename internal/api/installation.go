package api

import (
	"net/http"
	"slices"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// installationRoutes are what the installation admin reads of the
// installation itself: its providers with their circuit breakers, and the
// warm pools.
func (a *API) installationRoutes() []Route {
	return []Route{
		route("GET", "/api/v1/providers", installation, a.listProviders),
		route("GET", "/api/v1/warm-pool", installation, a.getWarmPool),
	}
}

// listProviders lists the providers, the default first, each with its
// capability matrix and its breaker's state.
func (a *API) listProviders(w http.ResponseWriter, r *http.Request) error {
	def := a.providers.Default()
	names := a.providers.Names()
	slices.SortStableFunc(names, func(x, y string) int { return boolRank(x != def) - boolRank(y != def) })
	out := client.List[client.ProviderStatus]{Items: []client.ProviderStatus{}}
	for _, name := range names {
		p, err := a.providers.Get(name)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, client.ProviderStatus{
			Name: name, Default: name == def, Capabilities: providerCapability(p.Capabilities()), Breaker: breakerStatus(p),
		})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// providerCapability is a provider's capability matrix on the wire.
func providerCapability(c provider.Capabilities) client.ProviderCapability {
	nets := make([]string, len(c.Networks))
	for i, n := range c.Networks {
		nets[i] = string(n)
	}
	return client.ProviderCapability{
		Isolation: c.Isolation, Pause: c.Pause, Agent: c.Agent, Networks: nets, Snapshot: c.Snapshot,
		WritableRoot: c.WritableRoot, GPUs: c.GPUs,
	}
}

// breakerStatus is p's circuit breaker's state, "none" when p is not
// behind one. The failure that opened it is a backend's public error (only
// those trip it); its code and message are what the admin sees.
func breakerStatus(p provider.Provider) client.BreakerStatus {
	b, ok := p.(*provider.Breaker)
	if !ok {
		return client.BreakerStatus{State: "none"}
	}
	state, err := b.State()
	out := client.BreakerStatus{State: state.String()}
	if err != nil && state != provider.BreakerClosed {
		out.Error = "the backend failed"
		if pe, ok := errdefs.Public(err); ok {
			out.Error = pe.Code + ": " + pe.Message
		}
	}
	return out
}

// getWarmPool answers the warm pools and the warm sandboxes they hold.
func (a *API) getWarmPool(w http.ResponseWriter, r *http.Request) error {
	views, err := a.runtimes.WarmPoolViews(r.Context())
	if err != nil {
		return err
	}
	out := client.WarmPoolStatus{Pools: make([]client.WarmPoolInfo, len(views))}
	for i, v := range views {
		out.Pools[i] = warmPoolOut(v)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func warmPoolOut(v runtime.WarmPoolView) client.WarmPoolInfo {
	p := client.WarmPoolInfo{
		Template: v.Template, Configured: v.Configured, Provider: v.Provider, Image: v.Image,
		CPUMillis: v.CPUMillis, MemoryMB: v.MemoryMB, Network: v.Network, Size: v.Size, Running: v.Running,
		Sandboxes: make([]client.WarmSandbox, len(v.Sandboxes)),
	}
	for i, s := range v.Sandboxes {
		switch s.State {
		case store.WarmReady:
			p.Ready++
		case store.WarmCreating:
			p.Creating++
		}
		p.Sandboxes[i] = client.WarmSandbox{
			ID: s.ID, State: string(s.State), Provider: s.Provider, ProviderSandboxID: s.ProviderSandboxID,
			Image: s.Image, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(),
		}
	}
	return p
}
