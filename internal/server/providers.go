package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"

	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/providers/kubernetes"
	sshprovider "github.com/paddockhq/paddock/internal/providers/ssh"
)

// providerSet is the providers component's instance: the registry of the
// configured providers, each behind its circuit breaker.
type providerSet struct {
	reg *provider.Registry
	// builds are the images built in the background on the default
	// provider's engine.
	builds  *imageBuilds
	release func(startFailed bool)
	// shimPath and pullImages are the providers section's, for the
	// machines orgs bring (the hosts component).
	shimPath   string
	pullImages bool
	// served: the server served; a start that failed before it also
	// undoes what the providers set up on the host.
	served atomic.Bool
}

// providersComponent registers the configured providers, the default
// first. A start that fails before the server serves leaves nothing on
// the host that they set up (the egress networks and their rules stay,
// for the next start).
func (w *wiring) providersComponent() component.Registration {
	return component.Def[*providerSet]{
		Name:     providersName,
		Requires: []string{storeName, metricsName},
		Init: func(ctx context.Context, ic *component.InitContext) (*providerSet, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			m, err := component.Get[*metrics.Metrics](ic, metricsName)
			if err != nil {
				return nil, err
			}
			cfg, err := component.SectionOf[*config.ProvidersConfig](ic)
			if err != nil {
				return nil, err
			}
			ps := &providerSet{reg: provider.NewRegistry(), shimPath: cfg.ShimPath, pullImages: cfg.PullImages}
			if len(w.o.Providers) > 0 {
				ps.release = registerGiven(ps.reg, w.o.Providers, m)
			} else if ps.release, err = registerProviders(ctx, ps.reg, providerSettings{cfg, w.egress, in.dataDir}, in.id, m, in.logger); err != nil {
				return nil, err
			}
			if ps.builds, err = w.imageBuilds(ctx, cfg, ps.reg, in.logger); err != nil {
				ps.release(true)
				return nil, err
			}
			return ps, nil
		},
		Start: func(ctx context.Context, ps *providerSet) error {
			ps.builds.start(ctx)
			return nil
		},
		Close: func(_ context.Context, ps *providerSet) error {
			ps.builds.close()
			ps.release(!ps.served.Load())
			return nil
		},
	}.Registration()
}

// providerSettings are what the providers are made from: the providers
// section, the egress networks (the egress section's) and the data
// directory.
type providerSettings struct {
	*config.ProvidersConfig
	egress  config.Egress
	dataDir string
}

// registerProviders registers the configured providers, the default
// first, and returns how to release them; startFailed also undoes what
// they set up on the host for a server that never served (a docker
// provider's run directory mount).
//
// Each is registered behind a circuit breaker (provider.Breaker), whose
// state and the backend failures it sees go to m.
func registerProviders(ctx context.Context, reg *provider.Registry, cfg providerSettings, instance string, m *metrics.Metrics, logger *slog.Logger) (func(startFailed bool), error) {
	var closers []func(startFailed bool)
	release := func(startFailed bool) {
		for _, c := range slices.Backward(closers) {
			c(startFailed)
		}
	}
	list := cfg.ProviderList()
	slices.SortStableFunc(list, func(a, b config.ProviderConfig) int {
		return cmp.Compare(boolRank(a.Name != cfg.Provider), boolRank(b.Name != cfg.Provider))
	})
	shim := ""
	guard := func(p provider.Provider) {
		b := provider.NewBreaker(p, provider.BreakerConfig{
			OnState: func(name string, s provider.BreakerState) {
				m.BreakerState(name, int(s))
				if s != provider.BreakerClosed {
					logger.Warn("provider circuit breaker", "provider", name, "state", s.String())
				} else {
					logger.Info("provider circuit breaker", "provider", name, "state", s.String())
				}
			},
			OnError: m.ProviderError,
		})
		m.AddProvider(p.Name())
		reg.Register(b)
		closers = append(closers, func(bool) { b.Close() })
	}
	for _, pc := range list {
		p, closer, err := newProvider(ctx, pc, cfg, instance, &shim, logger.With("provider", pc.Name))
		if err != nil {
			release(true)
			return nil, fmt.Errorf("provider %s: %w", pc.Name, err)
		}
		if closer != nil {
			closers = append(closers, closer)
		}
		guard(p)
	}
	return release, nil
}

// newProvider makes the provider pc configures, and returns how to
// release it (nil: nothing to release). shim is the agent binary of the
// docker providers, found by the first one. A kubernetes provider checks
// that its cluster answers and its namespace exists: a start without them
// fails, naming the provider.
func newProvider(ctx context.Context, pc config.ProviderConfig, cfg providerSettings, instance string, shim *string,
	logger *slog.Logger) (provider.Provider, func(startFailed bool), error) {
	switch pc.Kind {
	case "fake":
		return fake.New(fake.Config{Name: pc.Name, Instance: instance, NoPause: pc.NoPause, NoSnapshot: pc.NoSnapshot}), nil, nil
	case "docker":
		return newDocker(pc, cfg, instance, shim, logger)
	case config.KindSSH:
		return newSSH(pc, cfg, instance, shim, logger)
	case config.KindKubernetes:
		kc, err := kubeConfig(pc, cfg.egress, instance)
		if err != nil {
			return nil, nil, err
		}
		p, err := kubernetes.New(ctx, kc, logger)
		if err != nil {
			// Its text only: a failed start is reported by its text, and
			// the command line reads a *url.Error in the chain (client-go's
			// dial of the cluster) as the paddock server being unreachable.
			return nil, nil, errors.New(err.Error())
		}
		return p, func(bool) { _ = p.Close() }, nil
	}
	return nil, nil, fmt.Errorf("unknown kind %q", pc.Kind)
}

// newDocker makes a docker provider; a start that fails releases its run
// directory's mount.
func newDocker(pc config.ProviderConfig, cfg providerSettings, instance string, shim *string, logger *slog.Logger) (provider.Provider, func(bool), error) {
	if *shim == "" {
		var err error
		if *shim, err = findShim(cfg.ShimPath); err != nil {
			return nil, nil, err
		}
	}
	host := pc.DockerHost
	if host == "" {
		host = cfg.DockerHost
	}
	p, err := docker.New(docker.Config{
		Name:        pc.Name,
		Runtime:     pc.Runtime,
		Host:        host,
		Instance:    instance,
		ShimPath:    *shim,
		RunDir:      runDir(cfg),
		DiskDir:     filepath.Join(cfg.dataDir, "disks"),
		PullMissing: cfg.PullImages,
		Networks:    dockerNetworks(cfg.egress, instance),

		WritableRootUnbounded: cfg.WritableRootUnbounded,
	}, logger)
	if err != nil {
		return nil, nil, err
	}
	return p, func(startFailed bool) {
		if startFailed {
			if err := p.ReleaseRunDir(); err != nil {
				logger.Warn("releasing the run directory after a failed start", "err", err)
			}
		}
		_ = p.Close()
	}, nil
}

// newSSH makes an ssh provider: the docker provider's settings (the shim,
// pulling missing images) on the machine its ssh block names. It does not
// dial: the breaker's first ping does, and readiness reports a machine it
// cannot reach.
func newSSH(pc config.ProviderConfig, cfg providerSettings, instance string, shim *string, logger *slog.Logger) (provider.Provider, func(bool), error) {
	if *shim == "" {
		var err error
		if *shim, err = findShim(cfg.ShimPath); err != nil {
			return nil, nil, err
		}
	}
	s := pc.SSH
	p, err := sshprovider.New(sshprovider.Config{
		Name:         pc.Name,
		Address:      s.Address,
		User:         s.User,
		KeyFile:      s.KeyFile,
		HostKey:      s.HostKey,
		KnownHosts:   s.KnownHosts,
		DockerSocket: s.DockerSocket,
		RunDir:       s.RunDir,
		DiskDir:      s.DiskDir,
		Mode:         s.Mode,
		Instance:     instance,
		ShimPath:     *shim,
		PullMissing:  cfg.PullImages,
	}, logger)
	if err != nil {
		return nil, nil, err
	}
	return p, func(bool) { _ = p.Close() }, nil
}

// kubeConfig is the configuration of the kubernetes provider pc: its
// kubernetes block, the instance id its objects carry, and the egress
// proxy's address only while egress is on (without it, no proxy mode). A
// Pod's start is bounded below the runtime service's bound on a provider
// action (config.DefaultKubeStartTimeout when unset).
func kubeConfig(pc config.ProviderConfig, e config.Egress, instance string) (kubernetes.Config, error) {
	k := pc.Kubernetes
	if k == nil {
		return kubernetes.Config{}, errors.New("a kubernetes provider needs its kubernetes block")
	}
	from, err := k.AgentFromPrefixes()
	if err != nil {
		return kubernetes.Config{}, err
	}
	proxy, err := k.ProxyAddrPort()
	if err != nil {
		return kubernetes.Config{}, err
	}
	cidrs, err := k.PodCIDRPrefixes()
	if err != nil {
		return kubernetes.Config{}, err
	}
	deny, err := k.DenyPrefixes()
	if err != nil {
		return kubernetes.Config{}, err
	}
	if e.Disabled {
		proxy = netip.AddrPort{}
	}
	tolerations := make([]corev1.Toleration, len(k.Tolerations))
	for i, t := range k.Tolerations {
		tolerations[i] = corev1.Toleration{
			Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
			Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds,
		}
	}
	return kubernetes.Config{
		Name:            pc.Name,
		Instance:        instance,
		Kubeconfig:      k.Kubeconfig,
		Context:         k.Context,
		Namespace:       k.Namespace,
		RuntimeClass:    k.RuntimeClass,
		StorageClass:    k.StorageClass,
		NodeSelector:    maps.Clone(k.NodeSelector),
		Tolerations:     tolerations,
		ShimImage:       k.ShimImageOrDefault(),
		ImagePullPolicy: corev1.PullPolicy(k.ImagePullPolicy),
		NetworkPolicies: k.NetworkPolicies,
		AgentFrom:       from,
		ProxyAddr:       proxy,
		DenyCIDRs:       deny,
		PodCIDRs:        cidrs,
		Overcommit:      k.Overcommit,
		QPS:             k.APIQPS,
		Burst:           k.APIBurst,
		StartTimeout:    k.StartTimeoutOrDefault(),
	}, nil
}

// registerGiven registers the providers a test gives, as they are, the
// first the default; their owner closes them.
func registerGiven(reg *provider.Registry, ps []provider.Provider, m *metrics.Metrics) func(bool) {
	for _, p := range ps {
		m.AddProvider(p.Name())
		reg.Register(p)
	}
	return func(bool) {}
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// findShim locates the static paddock-shim binary: the configured path, else
// next to this executable, else on PATH.
func findShim(configured string) (string, error) {
	if configured != "" {
		if _, err := os.Stat(configured); err != nil {
			return "", fmt.Errorf("shim binary: %w", err)
		}
		return filepath.Abs(configured)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "paddock-shim")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("paddock-shim"); err == nil {
		return filepath.Abs(p)
	}
	return "", errors.New("paddock-shim not found: build it next to paddock (see README) or set --shim-path")
}

// runDir is where agent sockets live. Unix socket paths are limited to 107
// bytes, so a deep data dir falls back to a short directory under /tmp
// named after it.
func runDir(cfg providerSettings) string {
	if cfg.RunDir != "" {
		return cfg.RunDir
	}
	d := filepath.Join(cfg.dataDir, "run")
	if len(d) <= 60 {
		return d
	}
	sum := sha256.Sum256([]byte(cfg.dataDir))
	return filepath.Join(os.TempDir(), "paddock-"+hex.EncodeToString(sum[:6]))
}

// dockerNetworks are the egress networks of the docker provider; nil when
// egress is disabled. Those the configuration leaves unnamed are named
// after the instance id (paddock-egress-<hash>, paddock-open-<hash>), so
// two installations on one host never share them; an installation that
// has the networks of earlier releases (paddock-egress, paddock-open, with
// its label) keeps them.
func dockerNetworks(e config.Egress, instance string) *docker.Networks {
	if e.Disabled {
		return nil
	}
	n := &docker.Networks{Proxy: e.ProxyNetwork, Open: e.OpenNetwork, ProxyPort: e.ProxyPort}
	if n.Proxy == "" && n.Open == "" {
		n.Earlier = &docker.Networks{Proxy: config.EarlierProxyNetwork, Open: config.EarlierOpenNetwork}
	}
	sum := sha256.Sum256([]byte(instance))
	suffix := "-" + hex.EncodeToString(sum[:])[:12]
	if n.Proxy == "" {
		n.Proxy = config.EarlierProxyNetwork + suffix
	}
	if n.Open == "" {
		n.Open = config.EarlierOpenNetwork + suffix
	}
	return n
}
