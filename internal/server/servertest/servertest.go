// Package servertest runs a real paddock API — the server's own components
// (server.Build): real SQLite store, real runtime service, a provider of
// the test's choosing (the fake by default) — behind an httptest server,
// for API, CLI and end-to-end tests.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fleetevents"
	"github.com/paddockhq/paddock/internal/host"
	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/task"
	"github.com/paddockhq/paddock/internal/workflow"
	"github.com/paddockhq/paddock/internal/world"
)

// Options configure an Env.
type Options struct {
	// Provider backs runtimes; nil means a new fake provider.
	Provider provider.Provider
	// MoreProviders are registered after Provider, which stays the
	// default.
	MoreProviders []provider.Provider
	// Instance labels compute; "" means a unique id per test.
	Instance string
	// Image is the default runtime image; "" means the runtime default.
	Image string
	// AllowedImages is the image allow-list; nil means paddock/* and
	// example/* (the images tests name).
	AllowedImages []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Pricing prices compute; nil means ledger.Free (nothing is held,
	// charged or paused for credits). No settler runs: a test calls
	// Env.Ledger.Tick.
	Pricing *ledger.Pricing
	// NewOrgMicros are the credits every new org starts with.
	NewOrgMicros int64
	// WarmPools are kept by Env.Runtimes.FillWarmPools; no filler runs.
	WarmPools []runtime.WarmPool
	// ArchiveAfter is the runtime default; 0 means the runtime default.
	ArchiveAfter time.Duration
	// NoSpecCheck serves the API as the server does, without holding
	// every request and answer to the OpenAPI document: for benchmarks,
	// whose timings must not include that check.
	NoSpecCheck bool
	// Limits are the API's limits; zero fields take api.DefaultLimits.
	Limits api.Limits
	// Preview configures preview URLs; its Port defaults to the test
	// server's.
	Preview api.Preview
	// E2BDomain is the E2B-compatible surface's domain.
	E2BDomain string
	// Members says how org admins add members.
	Members config.Members
	// Logger is the server's logger; nil logs errors to stderr.
	Logger *slog.Logger
	// Builds are images built in the background (the test runs them);
	// nil: none.
	Builds *imagebuild.Builder
	// BuildsFor are the providers Builds builds for; nil: Provider.
	BuildsFor []string
	// Mount are API features mounted besides those the server's
	// components mount (credits, sign-in, capabilities, sessions,
	// metrics): the SSH gateway's info; one named as a component's takes
	// its place (a test's own metrics).
	Mount []api.Feature
	// Configure, when set, changes the server's configuration last.
	Configure func(*config.Config)
	// Wrap, when set, wraps what the server serves, outside the spec
	// check: to watch the requests a client sends.
	Wrap func(http.Handler) http.Handler
	// DataDir is the server's data directory, its store and keys; ""
	// means a fresh one of the test's.
	DataDir string
	// Store is the store's DSN (a PostgreSQL database that several Envs
	// share as replicas); "" means SQLite in the data directory.
	Store string
	// EventHeartbeat is how often an event stream says it is alive; 0:
	// api.DefaultHeartbeat.
	EventHeartbeat time.Duration
	// InstanceMode, when its Instance names org/workspace/project, is
	// instance mode: the API serves that runtime under /api/sandbox.
	InstanceMode config.InstanceConfig
	// ShimPath is the agent binary the machines orgs register run; "":
	// none (registering one answers host_unavailable).
	ShimPath string
}

// Env is a running API.
type Env struct {
	URL      string
	Key      string // an installation admin key
	Store    store.Store
	Runtimes *runtime.Service
	Ledger   *ledger.Ledger
	Secrets  *secrets.Service
	Bindings *binding.Service
	Sessions *session.Service
	Tasks    *task.Service
	// Workflows is the workflow service.
	Workflows *workflow.Service
	// Worlds is the worlds service.
	Worlds *world.Service
	// Hosts is the machines orgs brought.
	Hosts    *host.Service
	Provider provider.Provider
	Fake     *fake.Provider // the provider, when it is the fake
	Instance string
	// SignIn is the API's wallet sign-in (its session key is the data
	// directory's).
	SignIn *auth.SignIn
	// Access is the access service the API asks (an SSH gateway a test
	// serves asks it too).
	Access *iam.Service
	// API is the API the server serves.
	API    *api.API
	Server *httptest.Server
	// Stack is the server's components the Env runs.
	Stack *server.Stack
	// Events is the hub of the server's event stream.
	Events *fleetevents.Hub
}

// New starts an Env and stops it when the test ends. Its stack is built
// by the server's own components (server.Build), from a configuration
// and the overrides opts ask for: the providers given, no background
// loops (the test drives them), an httptest server.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	ctx := context.Background()
	env := &Env{Provider: opts.Provider, Instance: opts.Instance}
	if env.Provider == nil {
		env.Fake = fake.New(fake.Config{})
		env.Provider = env.Fake
	} else if f, ok := env.Provider.(*fake.Provider); ok {
		env.Fake = f
	}
	if env.Instance == "" {
		env.Instance = "test-" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-")
	}
	env.Server = httptest.NewUnstartedServer(nil)
	stack, err := server.Build(ctx, env.config(t, opts), loggerOf(opts), io.Discard, env.overrides(t, opts))
	if err != nil {
		env.Server.Listener.Close()
		t.Fatalf("build the server: %v", err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, server.ShutdownTimeout)
		defer cancel()
		if err := stack.Close(sctx); err != nil {
			t.Errorf("close the server: %v", err)
		}
		env.Server.Close()
	})
	env.Stack = stack
	env.Store, env.Runtimes, env.Ledger = stack.Store(), stack.Runtimes(), stack.Ledger()
	env.Secrets, env.Bindings, env.Sessions = stack.Secrets(), stack.Bindings(), stack.Sessions()
	env.Tasks, env.Workflows = stack.Tasks(), stack.Workflows()
	env.Worlds = stack.Worlds()
	env.Hosts = stack.Hosts()
	env.SignIn, env.API, env.Instance = stack.SignIn(), stack.API(), stack.Instance()
	env.Access = stack.Access()
	env.Events = stack.Events()
	// The test's admin key first: the server's start then makes none.
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	env.Key, _, err = auth.Keys{Store: env.Store, Now: now}.CreateInstallation(ctx, "test admin", "")
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	if err := stack.Start(ctx); err != nil {
		t.Fatalf("start the server: %v", err)
	}
	env.URL = env.Server.URL
	return env
}

// loggerOf is the server's logger. Server goroutines may log after the
// test returns, so logs go to stderr rather than t.Log.
func loggerOf(opts Options) *slog.Logger {
	if opts.Logger != nil {
		return opts.Logger
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// config is the server's configuration for opts: the defaults, a data
// directory of the test's, no SSH gateway and no egress proxy.
func (e *Env) config(t testing.TB, opts Options) config.Config {
	cfg := config.Default()
	cfg.DataDir, cfg.Store = opts.DataDir, opts.Store
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Listen = e.Server.Listener.Addr().String()
	cfg.SSHListen = "off"
	cfg.Egress.Disabled = true
	cfg.Provider = e.Provider.Name()
	cfg.InstanceID = e.Instance
	if opts.Image != "" {
		cfg.DefaultImage = opts.Image
	}
	cfg.AllowedImages = opts.AllowedImages
	if cfg.AllowedImages == nil {
		cfg.AllowedImages = []string{"paddock/*", "example/*"}
	}
	if opts.ArchiveAfter != 0 {
		cfg.ArchiveAfter = opts.ArchiveAfter
	}
	cfg.NewOrgCredits = float64(opts.NewOrgMicros) / ledger.MicrosPerCredit
	cfg.Members = opts.Members
	cfg.EventsHeartbeat = opts.EventHeartbeat
	cfg.ShimPath = opts.ShimPath
	cfg.InstanceConfig = opts.InstanceMode
	if opts.Configure != nil {
		opts.Configure(&cfg)
	}
	return cfg
}

// overrides are what the test gives the server's components in place of
// what they would make from the configuration.
func (e *Env) overrides(t testing.TB, opts Options) server.Overrides {
	pricing := ledger.Free
	if opts.Pricing != nil {
		pricing = *opts.Pricing
	}
	buildsFor := opts.BuildsFor
	if buildsFor == nil {
		buildsFor = []string{e.Provider.Name()}
	}
	return server.Overrides{
		Listener: e.Server.Listener,
		Serve: func(srv *http.Server) {
			e.Server.Config = srv
			e.Server.Start()
		},
		Providers: append([]provider.Provider{e.Provider}, opts.MoreProviders...),
		Now:       opts.Now,
		Pricing:   &pricing,
		WarmPools: opts.WarmPools,
		Builds:    opts.Builds, BuildsFor: buildsFor,
		Limits:    &opts.Limits,
		Preview:   &opts.Preview,
		E2BDomain: opts.E2BDomain,
		Mount:     opts.Mount,
		Wrap: func(a *api.API) http.Handler {
			// Every request and answer is held to api/openapi.yaml (spec.go).
			// The console's pages, the sandboxes' apps and the MCP
			// server's JSON-RPC are not the API's answers.
			notAPI := func(r *http.Request) bool { return a.IsPreview(r) || a.ServesConsole(r) || a.IsMCP(r) }
			var served http.Handler = newSpecCheck(t).wrap(a, notAPI)
			if opts.NoSpecCheck {
				served = a
			}
			if opts.Wrap != nil {
				served = opts.Wrap(served)
			}
			return served
		},
		Manual: true,
	}
}

// Response is a decoded HTTP response.
type Response struct {
	Status int
	Body   []byte
}

// Code returns the error code of an error body, or "".
func (r Response) Code() string {
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(r.Body, &e)
	return e.Code
}

// Decode decodes the body into v or fails the test.
func (r Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Do sends a request with the admin key. body may be nil, a string (sent
// as is) or a value (sent as JSON).
func (e *Env) Do(t testing.TB, method, path string, body any) Response {
	t.Helper()
	return e.DoKey(t, e.Key, method, path, body)
}

// DoKey is Do with a chosen key ("" sends none).
func (e *Env) DoKey(t testing.TB, key, method, path string, body any) Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: resp.StatusCode, Body: b}
}

// MustRaw sends body as contentType with the admin key and fails the
// test unless it answers want.
func (e *Env) MustRaw(t testing.TB, want int, method, path, contentType string, body []byte) Response {
	t.Helper()
	req, err := http.NewRequest(method, e.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.Key)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	return Response{Status: resp.StatusCode, Body: b}
}

// Must sends a request and fails the test unless it answers want.
func (e *Env) Must(t testing.TB, want int, method, path string, body any) Response {
	t.Helper()
	r := e.Do(t, method, path, body)
	if r.Status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// MustKey sends a request with key ("" for none) and fails the test
// unless the status is want.
func (e *Env) MustKey(t testing.TB, key string, want int, method, path string, body any) Response {
	t.Helper()
	r := e.DoKey(t, key, method, path, body)
	if r.Status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// Concurrently sends n identical POSTs to path at once and counts the
// statuses they answered.
func (e *Env) Concurrently(t testing.TB, n int, path string) map[int]int {
	t.Helper()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts = map[int]int{}
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.Do(t, "POST", path, nil)
			mu.Lock()
			counts[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return counts
}
