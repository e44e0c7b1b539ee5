package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	apispec "github.com/paddockhq/paddock/api"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/sidecar"
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

// readyz runs every readiness check and says which failed: the store
// answers and its schema is current, start-up reconciliation is done, and
// each provider's backend answers (a provider whose breaker is open fails
// at once). It says which replica answered and the leases of the loops
// it runs, held or not: a replica that holds none is ready too.
func (a *API) readyz(w http.ResponseWriter, r *http.Request) error {
	if !a.ready() {
		return errdefs.Unavailable("starting", "the server is starting")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	out := a.replicaLeases()
	check := func(name string, err error) {
		c := client.ReadyCheck{Name: name, OK: err == nil}
		if err != nil {
			c.Error = err.Error()
			if pe, ok := errdefs.Public(err); ok {
				c.Error = pe.Code + ": " + pe.Message
			}
		}
		out.Checks = append(out.Checks, c)
	}
	check("store", a.tenancy.Check(ctx))
	if a.reconciling != nil && a.reconciling() {
		check("reconciliation", errors.New("start-up reconciliation is still running; runtimes it has not reached answer 503 reconciling"))
	} else {
		check("reconciliation", nil)
	}
	for _, name := range a.providers.Names() {
		p, err := a.providers.Get(name)
		if err == nil {
			if pg, ok := p.(interface{ Ping(context.Context) error }); ok {
				err = pg.Ping(ctx)
			}
		}
		check("provider:"+name, err)
	}
	out.Status, out.Version = "ready", version.Version
	var failed []string
	for _, c := range out.Checks {
		if !c.OK {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) > 0 {
		out.Status, out.Code = "not_ready", "not_ready"
		out.Message = "failed: " + strings.Join(failed, ", ")
		writeJSON(w, http.StatusServiceUnavailable, out)
		return nil
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// replicaLeases is the readiness body's replica and the leases it runs.
func (a *API) replicaLeases() client.Readiness {
	var out client.Readiness
	if a.leases == nil {
		return out
	}
	out.Replica = a.leases.Replica()
	held := map[string]lease.Held{}
	for _, h := range a.leases.Held() {
		held[h.Name] = h
	}
	for _, name := range a.leases.Names() {
		l := client.ReadyLease{Name: name}
		if h, ok := held[name]; ok {
			exp := h.ExpiresAt.UTC()
			l.Held, l.Token, l.ExpiresAt = true, h.Token, &exp
		}
		out.Leases = append(out.Leases, l)
	}
	return out
}

// serveMetrics serves the Prometheus metrics.
func (a *API) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	a.metrics.Handler().ServeHTTP(w, r)
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
		out.Providers[name] = providerCapability(p.Capabilities())
	}
	out.Harnesses, out.SidecarCapabilities = a.harnessesAndSidecars(r.Context())
	out.Images = a.imageStatuses(r.Context())
	out.DefaultHarness = harness.Default
	if a.sessions != nil {
		out.DefaultHarness = a.sessions.DefaultHarness()
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// harnessesAndSidecars tells which harness CLIs the sandbox images carry
// (their labels, read from the default provider) and which sidecar
// capabilities have their image.
func (a *API) harnessesAndSidecars(ctx context.Context) ([]client.HarnessInfo, []client.SidecarCapability) {
	images := a.images
	if len(images) == 0 && a.runtimes != nil {
		images = []string{a.runtimes.Defaults().Image}
	}
	for _, sc := range sidecar.Known() {
		if !slices.Contains(images, sc.Image) {
			images = append(images, sc.Image)
		}
	}
	// image → harness names it carries; absent: the image is not there.
	carried := map[string][]string{}
	if p, err := a.providers.Get(a.providers.Default()); err == nil {
		if in, ok := p.(provider.ImageInspector); ok {
			for _, img := range images {
				labels, err := in.ImageLabels(ctx, img)
				if err != nil {
					continue
				}
				carried[img] = []string{}
				for _, entry := range strings.Split(labels[provider.LabelHarnesses], ",") {
					if name, _, _ := strings.Cut(strings.TrimSpace(entry), "="); name != "" {
						carried[img] = append(carried[img], name)
					}
				}
			}
		}
	}
	hs := []client.HarnessInfo{}
	for _, h := range harness.All() {
		info := harnessInfo(h)
		info.Images = []string{}
		if info.Secrets == nil {
			info.Secrets = []string{}
		}
		for _, img := range images {
			if slices.Contains(carried[img], h.Name) {
				info.Images = append(info.Images, img)
				info.Installed = info.Installed || img == images[0]
			}
		}
		hs = append(hs, info)
	}
	scs := []client.SidecarCapability{}
	for _, sc := range sidecar.Known() {
		_, present := carried[sc.Image]
		scs = append(scs, client.SidecarCapability{Name: sc.Name, Description: sc.Description, Image: sc.Image, Available: present})
	}
	return hs, scs
}

// listProvisions lists the provisions in flight and the recent ones.
func (a *API) listProvisions(w http.ResponseWriter, r *http.Request) error {
	now := time.Now()
	ps, err := a.visibleProvisions(r)
	if err != nil {
		return err
	}
	out := client.List[client.Provision]{Items: make([]client.Provision, len(ps))}
	for i, p := range ps {
		out.Items[i] = provisionOut(p, now)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// provisionOut renders p; one still in flight lasts until now.
func provisionOut(p runtime.Provision, now time.Time) client.Provision {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	c := client.Provision{
		ID: p.ID, RuntimeID: p.RuntimeID, SandboxID: p.SandboxID, OrgID: p.OrgID, Provider: p.Provider,
		Kind: p.Kind, Warm: p.Warm, State: p.State, StartedAt: p.StartedAt.UTC(), Error: p.Error,
		Steps: make([]client.ProvisionStep, len(p.Steps)),
	}
	end := now
	if !p.EndedAt.IsZero() {
		e := p.EndedAt.UTC()
		c.EndedAt, end = &e, p.EndedAt
	}
	c.DurationMs = ms(end.Sub(p.StartedAt))
	for j, st := range p.Steps {
		c.Steps[j] = client.ProvisionStep{Name: st.Name, StartedAt: st.StartedAt.UTC(), DurationMs: ms(st.Duration), Error: st.Error}
	}
	return c
}

// visibleProvisions are the provisions the caller may see: all for the
// installation admin; else those of runtimes in workspaces it sees (warm
// sandboxes, which belong to no org, are the installation's).
func (a *API) visibleProvisions(r *http.Request) ([]runtime.Provision, error) {
	id := identity(r)
	if id.Installation {
		return a.runtimes.Provisions(), nil
	}
	return a.runtimes.ProvisionsSeen(r.Context(), func(ctx context.Context, orgID string) (func(string) bool, error) {
		o, err := a.tenancy.Org(ctx, orgID)
		if errdefs.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		acc, ok, err := a.iam.OrgAccess(ctx, id, o)
		if err != nil || !ok {
			return nil, err
		}
		return acc.SeesWorkspace, nil
	})
}
