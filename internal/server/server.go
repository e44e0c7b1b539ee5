// Package server wires paddock together and runs it: it opens the store,
// establishes the installation id and the first admin key, registers the
// providers, builds the runtime service and the API, listens, and shuts all
// of it down in reverse order, under a deadline, when its context ends.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/clientaddr"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/lifecycle"
	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
	_ "github.com/paddockhq/paddock/internal/store/sqlite" // the "sqlite" store
)

// ShutdownTimeout bounds a graceful shutdown.
const ShutdownTimeout = 15 * time.Second

// AgentStreamGrace is how long a shutdown lets streams to sandbox agents
// (exec, terminals, file transfers) go on before it cuts them.
const AgentStreamGrace = 5 * time.Second

const metaInstanceID = "instance_id"

// Run serves until ctx ends. It writes the address it listens on, and on the
// first start the admin API key, to out.
func Run(ctx context.Context, cfg config.Config, logger *slog.Logger, out io.Writer) (retErr error) {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}

	// Step 0: the listener, first: a start that cannot have its address
	// (a busy port) fails before it creates anything, the admin key
	// included.
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w%s", cfg.Listen, err, inUseHint(err, "listen / PADDOCK_LISTEN"))
	}
	defer ln.Close()
	sshd, err := listenSSH(cfg, logger) // the SSH gateway's (ssh.go)
	if err != nil {
		return err
	}
	defer sshd.close()

	// Step 1: the store.
	dsn := cfg.Store
	if dsn == "" {
		dsn = "sqlite:" + filepath.Join(cfg.DataDir, "paddock.db")
	}
	st, err := store.Open(ctx, dsn, logger)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer func() {
		if err := st.Close(); err != nil && retErr == nil {
			retErr = err
		}
	}()

	// Step 2: the installation id, which labels all compute.
	instance, err := instanceID(ctx, st, cfg.InstanceID)
	if err != nil {
		return err
	}
	logger = logger.With("instance", instance)

	// Step 3: providers, each behind a circuit breaker, and the metrics
	// every component records into.
	m := metrics.New()
	providers := provider.NewRegistry()
	closeProviders, err := registerProviders(ctx, providers, cfg, instance, m, logger)
	if err != nil {
		return err
	}
	// A start that fails from here on leaves nothing on the host that it
	// set up (the egress networks and their rules stay, for the next start).
	served := false
	defer func() { closeProviders(!served) }()

	// Step 3b: the egress networks and proxy, before any sandbox starts.
	// Without them (not root, no iptables) only the none mode is offered.
	keys, err := secrets.LoadKeyring(cfg.DataDir, cfg.SecretsKey)
	if err != nil {
		return err
	}
	secretSvc := secrets.New(st, keys, logger.With("component", "secrets"))
	sessionKey, err := auth.LoadSessionKey(cfg.DataDir, cfg.SessionKey)
	if err != nil {
		return err
	}
	guard, err := newGuard(cfg)
	if err != nil {
		return err
	}
	gate, err := startEgress(ctx, cfg, st, providers, guard, secretSvc.Brokers, logger)
	if fe := (*fatalError)(nil); errors.As(err, &fe) {
		return err
	}
	if err != nil {
		logger.Error("egress: the proxy and open network modes are not available", "err", err)
	}
	defer gate.close()

	// Step 3c: the images the server builds in the background once it
	// serves (none unless an image builder is configured).
	builds, err := newImageBuilds(ctx, cfg, providers, logger)
	if err != nil {
		return err
	}
	defer builds.close()

	// Step 4: domain services and the API. The meter prices compute and
	// moves credits inside the runtime service's transactions.
	pricing, err := pricingOf(cfg)
	if err != nil {
		return err
	}
	meter := ledger.NewMeter(pricing)
	runtimes := runtime.New(runtime.Config{
		Store:     st,
		Providers: providers,
		Instance:  instance,
		Defaults: runtime.Defaults{
			Image:         cfg.DefaultImage,
			AllowedImages: cfg.AllowedImages,
			DiskMB:        cfg.DiskMB,
			MaxDiskMB:     cfg.MaxDiskMB,
			IdleTimeout:   cfg.IdleTimeout,
			MaxKeepalive:  cfg.MaxKeepalive,
			ArchiveAfter:  archiveAfter(cfg.ArchiveAfter),
		},
		Logger:    logger,
		Billing:   meter,
		WarmPools: warmPools(cfg),
		AgentEnv: func(ctx context.Context, sb store.Sandbox) (map[string]string, error) {
			env, err := secretSvc.Env(ctx, sb)
			if err != nil {
				return nil, err
			}
			maps.Copy(env, gate.env(sb))
			maps.Copy(env, sidecar.Env(ctx, st, sb))
			return env, nil
		},
		Secrets:        secretSvc,
		TrustedCA:      gate.trustedCA(),
		Guard:          guard,
		Metrics:        m,
		Images:         runtime.ImageBuildsOf(builds.builder),
		ImageProviders: builds.providers,
	})
	registerGauges(m, st)
	defer func() { _ = runtimes.Close() }()
	if err := runtimes.ValidateWarmPools(); err != nil {
		return err
	}
	newOrg, err := ledger.MicrosOf(cfg.NewOrgCredits)
	if err != nil {
		return fmt.Errorf("new org credits: %w", err)
	}
	credits := ledger.New(ledger.Config{
		Store: st, Meter: meter, Runtimes: runtimes, NewOrgMicros: newOrg, Logger: logger.With("component", "ledger"),
	})
	// What agents bring into their runtimes (capability bindings, applied
	// to every sandbox as it begins to run) and run there (harnesses);
	// stopped before the runtime service and the store.
	if _, ok := harness.Lookup(cfg.DefaultHarness); cfg.DefaultHarness != "" && !ok {
		return fmt.Errorf("default harness %q is not one of paddock's harnesses (GET /api/capabilities lists them)", cfg.DefaultHarness)
	}
	bindings := binding.New(binding.Config{Store: st, Runtimes: runtimes, Logger: logger.With("component", "capabilities")})
	defer bindings.Close()
	sessions := session.New(session.Config{
		Store: st, Runtimes: runtimes, Bindings: bindings, Secrets: secretSvc,
		Logger: logger.With("component", "sessions"), DefaultHarness: cfg.DefaultHarness,
		EgressRecorded: gate.recorded(),
	})
	trusted, err := clientaddr.ParseTrusted(cfg.TrustedProxies)
	if err != nil {
		return err
	}
	clients, err := clientaddr.New(trusted, cfg.TrustedProxyHeader)
	if err != nil {
		return err
	}
	var ready atomic.Bool
	handler := api.New(api.Config{
		Store:     st,
		Runtimes:  runtimes,
		Providers: providers,
		Logger:    logger,
		Ready:     ready.Load,
		Ledger:    credits,
		Secrets:   secretSvc,
		Metrics:   m,

		Reconciling: runtimes.Reconciling,
		Logs:        logs.BookOf(logger),
		Bindings:    bindings,
		Sessions:    sessions,
		SignIn: &auth.SignIn{
			Store: st, Key: sessionKey, Now: time.Now, Domain: signInDomain(cfg.SignInDomain, ln.Addr()),
			ChallengeTTL: cfg.ChallengeTTL, SessionTTL: cfg.SessionTTL,
		},
		Limits:  limitsOf(cfg.Limits),
		Clients: clients,
		Preview: previewOf(cfg, ln.Addr()),
		SSH:     sshd.Info(),
		Members: cfg.Members,
		Builds:  builds.builder,
	})

	// Step 5: lifecycle automation. Every live runtime is held for a
	// start-up reconciliation, so a restart after a crash acts only on a
	// ledger and providers that agree: actions on a held runtime answer
	// 503 reconciling until it is reached, while everything else is
	// served. The reconciliation runs in the background, several runtimes
	// at once; then expiry and periodic reconciliation, owned here and
	// stopped before the store closes.
	life := lifecycle.New(lifecycle.Config{
		Store: st, Runtimes: runtimes, Logger: logger.With("component", "lifecycle"),
		Concurrency: cfg.ReconcileConcurrency,
	})
	if err := life.Hold(ctx); err != nil {
		return fmt.Errorf("list runtimes to reconcile: %w", err)
	}
	lifeCtx, stopLife := context.WithCancel(context.WithoutCancel(ctx))
	lifeDone := make(chan struct{})
	go func() {
		defer close(lifeDone)
		t0 := time.Now()
		rep, err := life.Reconcile(lifeCtx)
		runtimes.ReleaseHeld()
		if err != nil {
			logger.Error("start-up reconciliation", "err", err)
		}
		logger.Info("start-up reconciliation", "reconciled", len(rep.Reconciled), "orphans_removed", len(rep.Orphans), "took", time.Since(t0))
		life.Run(lifeCtx)
	}()
	defer func() {
		stopLife()
		<-lifeDone
	}()
	// The settler charges running compute every settle interval and
	// pauses what an org can no longer pay for; it too stops before the
	// store closes.
	settler := ledger.NewSettler(credits, ledger.SettlerConfig{
		Interval: cfg.SettleInterval,
		AfterTick: func(res ledger.TickResult, err error) {
			m.CreditsDeducted(res.ChargedMicros)
			if err != nil {
				logger.Error("settling running compute", "err", err)
			}
		},
	})
	settler.Start()
	defer settler.Stop()
	logger.Info("credits", "pricing", pricing.String())

	// Step 6: the first admin key, printed once, now that nothing is left
	// that could fail before the server serves; then serve on the
	// listener of step 0.
	if err := bootstrapKey(ctx, st, cfg.BootstrapKey, out); err != nil {
		return err
	}
	// HTTP/1.1, and HTTP/2 without TLS for clients that know to use it
	// (prior knowledge): preview URLs carry both to sandbox servers.
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Protocols:         &protos,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	served = true
	go func() { serveErr <- srv.Serve(ln) }()
	sshd.start(st, runtimes, logger, out)
	builds.start(ctx)
	ready.Store(true)
	fmt.Fprintf(out, "paddock listening on http://%s (data dir %s, provider %s)\n", ln.Addr(), cfg.DataDir, providers.Default())
	logger.Info("serving", "addr", ln.Addr().String())

	select {
	case err := <-serveErr:
		// The store closes next: the SSH gateway stops first.
		sshd.shutdown(0)()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	// Shutdown, in reverse: stop taking requests and drain them, then the
	// deferred steps close providers and the store.
	logger.Info("shutting down")
	ready.Store(false)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	// Streams to sandbox agents (terminals, followed output) need not end
	// by themselves, and Shutdown does not wait for WebSockets: after a
	// grace period, and in any case once the rest is drained, the agent
	// connections are closed, which ends them.
	closeAgents := time.AfterFunc(AgentStreamGrace, func() { _ = runtimes.Close() })
	sshStopped := sshd.shutdown(AgentStreamGrace) // SSH sessions get the same grace
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("shutdown did not drain every request", "err", err)
		_ = srv.Close()
	}
	sshStopped()
	closeAgents.Stop()
	_ = runtimes.Close()
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// inUseHint is what a start that could not have an address tells the
// user: the setting to change, when another process (another installation)
// holds it.
func inUseHint(err error, setting string) string {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return ""
	}
	return " (another installation?): set " + setting
}

func instanceID(ctx context.Context, st store.Store, configured string) (string, error) {
	id, err := st.GetMeta(ctx, metaInstanceID)
	if err == nil {
		return id, nil
	}
	if !errdefs.IsNotFound(err) {
		return "", err
	}
	id = configured
	if id == "" {
		id = uuid.NewString()
	}
	if err := st.SetMeta(ctx, metaInstanceID, id); err != nil {
		return "", err
	}
	return id, nil
}

// bootstrapKey creates the first admin key when the store has none and
// prints it once. A configured bootstrap key is used as that key.
func bootstrapKey(ctx context.Context, st store.Store, configured string, out io.Writer) error {
	n, err := st.CountAPIKeys(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	keys := auth.Keys{Store: st, Now: time.Now}
	plain, _, err := keys.CreateInstallation(ctx, "bootstrap admin", configured)
	if err != nil {
		return fmt.Errorf("create the admin key: %w", err)
	}
	if configured != "" {
		fmt.Fprintln(out, "paddock: created the admin API key from the configured bootstrap key")
		return nil
	}
	fmt.Fprintf(out, "paddock: admin API key (shown once, store it now): %s\n", plain)
	return nil
}

// pricingOf builds the price list from the configuration.
func pricingOf(cfg config.Config) (ledger.Pricing, error) {
	rates, err := ledger.ParseProviderRates(cfg.CreditProviderRates)
	if err != nil {
		return ledger.Pricing{}, fmt.Errorf("credit provider rates: %w", err)
	}
	p := ledger.Pricing{
		Default:    ledger.Rate{CPUMicros: cfg.CreditRateCPU, MemoryMicros: cfg.CreditRateMemory},
		Providers:  rates,
		FirstSlice: cfg.CreditFirstSlice,
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

// warmPools are the warm pools cfg asks for: the default template's, then
// the listed ones.
func warmPools(cfg config.Config) []runtime.WarmPool {
	var out []runtime.WarmPool
	if cfg.WarmPool > 0 {
		out = append(out, runtime.WarmPool{Size: cfg.WarmPool, Running: cfg.WarmPoolRunning})
	}
	for _, wp := range cfg.WarmPools {
		out = append(out, runtime.WarmPool{
			Image: wp.Image, CPUMillis: wp.CPUMillis, MemoryMB: wp.MemoryMB,
			PidsLimit: wp.PidsLimit, Network: wp.Network, Size: wp.Size, Running: wp.Running,
		})
	}
	return out
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

// limitsOf is the API's limits from the configuration's.
func limitsOf(l config.Limits) api.Limits {
	return api.Limits{
		PerKey:              api.Rate{PerSecond: l.RatePerKey, Burst: l.BurstPerKey},
		PerClient:           api.Rate{PerSecond: l.RatePerClient, Burst: l.BurstPerClient},
		ExecPerRuntime:      l.ExecStreamsPerRuntime,
		ExecPerUser:         l.ExecStreamsPerUser,
		TerminalsPerRuntime: l.TerminalsPerRuntime,
		TerminalsPerUser:    l.TerminalsPerUser,
		JSONBodyBytes:       l.JSONBodyBytes,
		UploadBodyBytes:     l.UploadBodyBytes,
		BundleBodyBytes:     l.BundleBodyBytes,
	}
}

// signInDomain is the name wallets sign in to: the configured one, else
// the address the server listens on ("localhost" for an unspecified host).
func signInDomain(configured string, addr net.Addr) string {
	if configured != "" {
		return configured
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// portOf is the port of a listener's address.
func portOf(addr net.Addr) string {
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return ""
	}
	return port
}

// previewOf is the API's preview configuration: the URLs it hands out use
// the configured scheme and port, else http and the listen port.
func previewOf(cfg config.Config, addr net.Addr) api.Preview {
	p := api.Preview{Domain: cfg.PreviewDomain, Scheme: cfg.PreviewScheme, Port: cfg.PreviewPort}
	switch p.Port {
	case "":
		p.Port = portOf(addr)
	case "none":
		p.Port = ""
	}
	return p
}
