package api

import (
	"net/http"

	apispec "github.com/paddockhq/paddock/api"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/version"
	"github.com/paddockhq/paddock/pkg/client"
)

func (a *API) health(w http.ResponseWriter, r *http.Request) error {
	if !a.ready() {
		return errdefs.Unavailable("starting", "the server is starting")
	}
	writeJSON(w, http.StatusOK, client.Health{Status: "ok", Version: version.Version})
	return nil
}

func (a *API) readyz(w http.ResponseWriter, r *http.Request) error {
	if !a.ready() {
		return errdefs.Unavailable("starting", "the server is starting")
	}
	if _, err := a.store.CountAPIKeys(r.Context()); err != nil {
		return errdefs.Unavailable("store_unavailable", "the store does not answer").WithCause(err)
	}
	writeJSON(w, http.StatusOK, client.Health{Status: "ready", Version: version.Version})
	return nil
}

func (a *API) openapi(w http.ResponseWriter, r *http.Request) error {
	doc, err := apispec.JSON()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc)
	return nil
}

func (a *API) capabilities(w http.ResponseWriter, r *http.Request) error {
	out := client.Capabilities{
		Version:         version.Version,
		DefaultProvider: a.providers.Default(),
		Providers:       map[string]client.ProviderCapability{},
	}
	for _, name := range a.providers.Names() {
		p, err := a.providers.Get(name)
		if err != nil {
			continue
		}
		c := p.Capabilities()
		nets := make([]string, len(c.Networks))
		for i, n := range c.Networks {
			nets[i] = string(n)
		}
		out.Providers[name] = client.ProviderCapability{
			Isolation: c.Isolation, Pause: c.Pause, Agent: c.Agent, Networks: nets, Snapshot: c.Snapshot,
			WritableRoot: c.WritableRoot,
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
