package server

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/host"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
)

// runtimePart is the runtime component's instance: the runtime service,
// the meter it bills through (the ledger's, priced from the
// configuration), and the images the server builds in the background
// (the providers component's).
type runtimePart struct {
	svc     *runtime.Service
	meter   *ledger.Meter
	pricing ledger.Pricing
	builds  *imageBuilds
}

// runtimeComponent builds the runtime service: defaults, warm pools, what
// a sandbox's agent is given (its secrets, the egress proxy, its
// sidecars), and what compute costs.
func (w *wiring) runtimeComponent() component.Registration {
	return component.Def[*runtimePart]{
		Name:     runtimeName,
		Requires: []string{storeName, providersName, secretsName, hostsName, egressName, metricsName, previewName},
		Init: func(ctx context.Context, ic *component.InitContext) (*runtimePart, error) {
			deps, err := runtimeDepsOf(ic)
			if err != nil {
				return nil, err
			}
			cfg, err := component.SectionOf[*config.RuntimeConfig](ic)
			if err != nil {
				return nil, err
			}
			rp := &runtimePart{builds: deps.providers.builds}
			if rp.pricing, err = w.pricing(cfg); err != nil {
				return nil, err
			}
			// The machines orgs brought with a cost per hour are priced
			// by the hour.
			rp.pricing.Hourly = deps.hosts.HourlyRate
			rp.meter = ledger.NewMeter(rp.pricing)
			rp.svc = runtime.New(w.runtimeConfig(cfg, deps, rp))
			if err := rp.svc.ValidateWarmPools(); err != nil {
				_ = rp.svc.Close()
				return nil, err
			}
			return rp, nil
		},
		Close: func(_ context.Context, rp *runtimePart) error {
			_ = rp.svc.Close()
			return nil
		},
	}.Registration()
}

// runtimeDeps are what the runtime component requires.
type runtimeDeps struct {
	in        *installation
	providers *providerSet
	secrets   *secrets.Service
	egress    *egressPart
	metrics   *metrics.Metrics
	hosts     *host.Service
	preview   api.Preview
}

func runtimeDepsOf(ic *component.InitContext) (d runtimeDeps, err error) {
	if d.in, err = component.Get[*installation](ic, storeName); err != nil {
		return d, err
	}
	if d.providers, err = component.Get[*providerSet](ic, providersName); err != nil {
		return d, err
	}
	if d.secrets, err = component.Get[*secrets.Service](ic, secretsName); err != nil {
		return d, err
	}
	if d.egress, err = component.Get[*egressPart](ic, egressName); err != nil {
		return d, err
	}
	if d.metrics, err = component.Get[*metrics.Metrics](ic, metricsName); err != nil {
		return d, err
	}
	if d.hosts, err = component.Get[*host.Service](ic, hostsName); err != nil {
		return d, err
	}
	d.preview, err = component.Get[api.Preview](ic, previewName)
	return d, err
}

// runtimeConfig is the runtime service's configuration.
func (w *wiring) runtimeConfig(cfg *config.RuntimeConfig, d runtimeDeps, rp *runtimePart) runtime.Config {
	return runtime.Config{
		Store:     d.in.st,
		Providers: d.providers.reg,
		Instance:  d.in.id,
		Defaults: runtime.Defaults{
			Image:         cfg.DefaultImage,
			AllowedImages: cfg.AllowedImages,
			DiskMB:        cfg.DiskMB,
			MaxDiskMB:     cfg.MaxDiskMB,
			IdleTimeout:   cfg.IdleTimeout,
			MaxKeepalive:  cfg.MaxKeepalive,
			ArchiveAfter:  archiveAfter(cfg.ArchiveAfter),
		},
		Logger:              d.in.logger,
		Now:                 w.now,
		Billing:             rp.meter,
		WarmPools:           w.warmPools(cfg),
		WarmMemoryCeilingMB: cfg.WarmPoolMemoryCeilingMB,
		AgentEnv: func(ctx context.Context, sb store.Sandbox) (map[string]string, error) {
			env, err := d.secrets.Env(ctx, sb)
			if err != nil {
				return nil, err
			}
			maps.Copy(env, d.egress.gate.Env(sb))
			if sb.RuntimeID != "" {
				// Its sidecars and its own preview URLs; a warm sandbox
				// learns them when a runtime claims it.
				rt, err := d.in.st.GetRuntime(ctx, sb.RuntimeID)
				switch {
				case err == nil:
					maps.Copy(env, sidecar.Env(rt))
					maps.Copy(env, d.preview.Env(rt))
				case !errdefs.IsNotFound(err):
					return nil, err
				}
			}
			return env, nil
		},
		Secrets:        d.secrets,
		TrustedCA:      d.egress.gate.TrustedCA(),
		Guard:          d.egress.guard,
		Metrics:        d.metrics,
		Images:         runtime.ImageBuildsOf(rp.builds.builder),
		ImageProviders: rp.builds.providers,
	}
}

// pricing prices compute: as a test gives it, else as configured.
func (w *wiring) pricing(cfg *config.RuntimeConfig) (ledger.Pricing, error) {
	if w.o.Pricing != nil {
		return *w.o.Pricing, nil
	}
	return pricingOf(cfg)
}

// pricingOf builds the price list from the configuration.
func pricingOf(cfg *config.RuntimeConfig) (ledger.Pricing, error) {
	rates, err := ledger.ParseProviderRates(cfg.CreditProviderRates)
	if err != nil {
		return ledger.Pricing{}, fmt.Errorf("credit provider rates: %w", err)
	}
	p := ledger.Pricing{
		Default:        ledger.Rate{CPUMicros: cfg.CreditRateCPU, MemoryMicros: cfg.CreditRateMemory},
		Providers:      rates,
		FirstSlice:     cfg.CreditFirstSlice,
		SnapshotMicros: cfg.CreditSnapshotRate,
	}
	if err := p.Validate(); err != nil {
		return ledger.Pricing{}, fmt.Errorf("credit pricing: %w", err)
	}
	return p, nil
}

// archiveAfter maps the configuration's "0 is never" to the runtime
// defaults' "negative is never".
func archiveAfter(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// warmPools are the warm pools a test gives, else the configured ones.
func (w *wiring) warmPools(cfg *config.RuntimeConfig) []runtime.WarmPool {
	if w.o.WarmPools != nil {
		return w.o.WarmPools
	}
	return warmPools(cfg)
}

// warmPools are the warm pools cfg asks for: the default template's, then
// the listed ones.
func warmPools(cfg *config.RuntimeConfig) []runtime.WarmPool {
	var out []runtime.WarmPool
	if cfg.WarmPool > 0 {
		out = append(out, runtime.WarmPool{Size: cfg.WarmPool, Running: cfg.WarmPoolRunning})
	}
	for _, wp := range cfg.WarmPools {
		out = append(out, runtime.WarmPool{
			Image: wp.Image, CPUMillis: wp.CPUMillis, MemoryMB: wp.MemoryMB,
			PidsLimit: wp.PidsLimit, Network: wp.Network, Size: wp.Size, Min: wp.Min, Max: wp.Max, Running: wp.Running,
		})
	}
	return out
}
