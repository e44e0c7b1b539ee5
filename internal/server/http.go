package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/clientaddr"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/console"
	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/version"
)

// httpServer is the HTTP component's instance: the API, with every
// feature the components mounted, wallet sign-in and the web console, on
// the listener opened first.
type httpServer struct {
	api       *api.API
	srv       *http.Server
	ln        net.Listener
	ready     atomic.Bool
	in        *installation
	providers *providerSet
	runtime   *runtimePart
	access    *accessPart
	out       io.Writer
	// serveOn, when set, serves srv in place of serving it on ln (a
	// test's httptest server).
	serveOn func(*http.Server)
	// manual: a shutdown cuts streams to sandbox agents at once.
	manual bool
	// serveErr is where Serve returns; nil until it serves.
	serveErr chan error
	// failed: Serve returned by itself; no grace on the way out.
	failed bool
}

// httpComponent is the API. It requires every component: they are all
// up before it serves, and it stops taking requests before any of them
// closes.
func (w *wiring) httpComponent() component.Registration {
	return component.Def[*httpServer]{
		Name: httpName,
		Requires: []string{storeName, accessName, metricsName, providersName, secretsName, egressName, runtimeName,
			ledgerName, bindingsName, sessionsName, tasksName, worldsName, workflowsName, lifecycleName, sshName, previewName, eventsName, instanceName},
		Init:  w.initHTTP,
		Start: func(ctx context.Context, h *httpServer) error { return h.start(ctx) },
		Close: func(ctx context.Context, h *httpServer) error { return h.drain(ctx) },
	}.Registration()
}

func (w *wiring) initHTTP(_ context.Context, ic *component.InitContext) (*httpServer, error) {
	h := &httpServer{ln: w.doors.api, out: w.out, serveOn: w.o.Serve, manual: w.o.Manual}
	cfg, err := component.SectionOf[*config.HTTPConfig](ic)
	if err != nil {
		return nil, err
	}
	sec, preview, err := h.requires(ic)
	if err != nil {
		return nil, err
	}
	clients, err := clientsOf(cfg)
	if err != nil {
		return nil, err
	}
	limits := limitsOf(cfg.Limits)
	if w.o.Limits != nil {
		limits = *w.o.Limits
	}
	h.api = api.New(api.Config{
		Access: h.access.svc, Tenancy: h.access.tenancy, Runtimes: h.runtime.svc, Providers: h.providers.reg, Now: w.now,
		Logger: h.in.logger, Ready: h.ready.Load, Secrets: sec, Reconciling: h.runtime.svc.Reconciling, Leases: h.in.leases,
		Logs: logs.BookOf(h.in.logger), Limits: limits, LimitState: h.in.limitState(), Clients: clients, Preview: preview,
		Builds: h.providers.builds.builder, E2B: api.E2B{Domain: cmp.Or(w.o.E2BDomain, cfg.E2BDomain), Store: h.in.st},
	})
	h.api.Mount(w.mountedFeatures(api.SignIn(h.access.sessions), api.Console(console.New()), api.MCP(version.Version))...)
	warnSameSitePreviews(h.in.logger, h.access.signIn.Domain, preview.Domain)
	var served http.Handler = h.api
	if w.o.Wrap != nil {
		served = w.o.Wrap(h.api)
	}
	h.srv = newHTTPServer(served, h.in.logger)
	// Event streams never end by themselves: a shutdown ends them as it
	// begins, so that the drain waits for them no longer.
	ev, err := component.Get[*eventsPart](ic, eventsName)
	if err != nil {
		return nil, err
	}
	h.srv.RegisterOnShutdown(ev.hub.Drain)
	return h, nil
}

// requires gets the instances the HTTP component requires: it keeps
// those it uses after Init, and returns the others.
func (h *httpServer) requires(ic *component.InitContext) (sec *secrets.Service, preview api.Preview, err error) {
	if h.in, err = component.Get[*installation](ic, storeName); err != nil {
		return nil, preview, err
	}
	if h.providers, err = component.Get[*providerSet](ic, providersName); err != nil {
		return nil, preview, err
	}
	if h.runtime, err = component.Get[*runtimePart](ic, runtimeName); err != nil {
		return nil, preview, err
	}
	if h.access, err = component.Get[*accessPart](ic, accessName); err != nil {
		return nil, preview, err
	}
	if sec, err = component.Get[*secrets.Service](ic, secretsName); err != nil {
		return nil, preview, err
	}
	preview, err = component.Get[api.Preview](ic, previewName)
	return sec, preview, err
}

// mountedFeatures are the features the components mounted, then always
// (those the HTTP component mounts itself), and a test's (Overrides.Mount)
// in place of those of the same name; instance mode's last, since its
// routes mirror the others' runtime routes (a preview token's among them,
// which sign-in mounts).
func (w *wiring) mountedFeatures(always ...api.Feature) []api.Feature {
	fs := slices.DeleteFunc(append(slices.Clone(w.features), always...), func(f api.Feature) bool {
		return slices.ContainsFunc(w.o.Mount, func(m api.Feature) bool { return m.Name == f.Name })
	})
	fs = append(fs, w.o.Mount...)
	slices.SortStableFunc(fs, func(a, b api.Feature) int {
		return cmp.Compare(boolInt(a.Name == api.InstanceFeature), boolInt(b.Name == api.InstanceFeature))
	})
	return fs
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// clientsOf finds the address a request came from, trusting the
// configured proxies.
func clientsOf(cfg *config.HTTPConfig) (clientaddr.Resolver, error) {
	trusted, err := clientaddr.ParseTrusted(cfg.TrustedProxies)
	if err != nil {
		return clientaddr.Resolver{}, err
	}
	return clientaddr.New(trusted, cfg.TrustedProxyHeader)
}

// newHTTPServer serves HTTP/1.1, and HTTP/2 without TLS for clients that
// know to use it (prior knowledge): preview URLs carry both to sandbox
// servers.
func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	return &http.Server{
		Protocols:         &protos,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// wait returns when ctx ends or serving fails.
func (h *httpServer) wait(ctx context.Context) error {
	select {
	case err := <-h.serveErr:
		h.failed = true
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		return nil
	}
}

// start is the HTTP component's Start, the last: it serves on the
// listener opened first (or as serveOn does).
func (h *httpServer) start(ctx context.Context) error {
	h.srv.BaseContext = func(net.Listener) context.Context { return ctx }
	h.serveErr = make(chan error, 1)
	h.providers.served.Store(true)
	if h.serveOn != nil {
		h.serveOn(h.srv)
	} else {
		go func() { h.serveErr <- h.srv.Serve(h.ln) }()
	}
	h.ready.Store(true)
	fmt.Fprintf(h.out, "paddock listening on http://%s (data dir %s, provider %s)\n", h.ln.Addr(), h.in.dataDir, h.providers.reg.Default())
	h.in.logger.Info("serving", "addr", h.ln.Addr().String())
	return nil
}

// drainMargin is what the drain leaves of the shutdown's deadline: requests
// that have not drained by then are cut, and the components after the API
// still close within the deadline.
const drainMargin = time.Second

// drain stops taking requests and drains them under ctx's deadline.
// Streams to sandbox agents (terminals, followed output) need not end by
// themselves, and Shutdown does not wait for WebSockets: after a grace
// period, and in any case once the rest is drained, the agent connections
// are closed, which ends them. SSH sessions get the same grace (the SSH
// component closes after this one).
func (h *httpServer) drain(ctx context.Context) error {
	h.ready.Store(false)
	if h.serveErr == nil {
		return nil // it never served
	}
	grace := AgentStreamGrace
	if h.failed || h.manual {
		grace = 0
	}
	// The agents are cut after the grace, or when the runtime component
	// closes, after the SSH gateway has stopped: its sessions have the
	// same grace.
	time.AfterFunc(grace, h.cutAgentStreams)
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-drainMargin))
		defer cancel()
	}
	if err := h.srv.Shutdown(ctx); err != nil {
		h.in.logger.Warn("shutdown did not drain every request", "err", err)
		_ = h.srv.Close()
	}
	if h.failed || h.serveOn != nil {
		return nil // serve returned its error, or it is not ours to wait for
	}
	if err := <-h.serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// cutAgentStreams closes the connections to sandbox agents, which ends
// the streams over them; the runtime component's Close does it too, after
// the SSH gateway's. The runtime's event subscribers hear on until then.
func (h *httpServer) cutAgentStreams() { h.runtime.svc.CloseAgents() }

// limitsOf is the API's limits from the configuration's.
func limitsOf(l config.Limits) api.Limits {
	return api.Limits{
		PerKey:              api.Rate{PerSecond: l.RatePerKey, Burst: l.BurstPerKey},
		PerClient:           api.Rate{PerSecond: l.RatePerClient, Burst: l.BurstPerClient},
		ExecPerRuntime:      l.ExecStreamsPerRuntime,
		ExecPerUser:         l.ExecStreamsPerUser,
		TerminalsPerRuntime: l.TerminalsPerRuntime,
		TerminalsPerUser:    l.TerminalsPerUser,
		MCPPerUser:          l.MCPRequestsPerUser,
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
