// Package servertest runs a real paddock API — real SQLite store, real
// runtime service, a provider of the test's choosing (the fake by default) —
// behind an httptest server, for API and CLI tests.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
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
	// Members says how org admins add members.
	Members config.Members
	// Logger is the server's logger; nil logs errors to stderr.
	Logger *slog.Logger
	// Builds are images built in the background (the test runs them);
	// nil: none.
	Builds *imagebuild.Builder
	// BuildsFor are the providers Builds builds for; nil: Provider.
	BuildsFor []string
	// Mount are API features mounted besides those every Env has
	// (credits, sign-in, capabilities, sessions): the SSH gateway's info,
	// metrics.
	Mount []api.Feature
	// Wrap, when set, wraps what the server serves, outside the spec
	// check: to watch the requests a client sends.
	Wrap func(http.Handler) http.Handler
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
	Provider provider.Provider
	Fake     *fake.Provider // the provider, when it is the fake
	Instance string
	// SignIn is the API's wallet sign-in (its session key is the data
	// directory's).
	SignIn *auth.SignIn
	// API is the API the server serves.
	API    *api.API
	Server *httptest.Server
}

// New starts an Env and stops it when the test ends.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	ctx := context.Background()
	// Server goroutines may log after the test returns, so logs go to
	// stderr rather than t.Log.
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	dataDir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dataDir, "paddock.db"), logger)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })

	env := &Env{Store: st, Provider: opts.Provider, Instance: opts.Instance}
	if env.Provider == nil {
		env.Fake = fake.New(fake.Config{})
		env.Provider = env.Fake
	} else if f, ok := env.Provider.(*fake.Provider); ok {
		env.Fake = f
	}
	if env.Instance == "" {
		env.Instance = "test-" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-")
	}
	reg := provider.NewRegistry()
	reg.Register(env.Provider)
	for _, p := range opts.MoreProviders {
		reg.Register(p)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	pricing := ledger.Free
	if opts.Pricing != nil {
		pricing = *opts.Pricing
	}
	meter := ledger.NewMeter(pricing)
	allowed := opts.AllowedImages
	if allowed == nil {
		allowed = []string{"paddock/*", "example/*"}
	}
	keys, err := secrets.LoadKeyring(dataDir, "")
	if err != nil {
		t.Fatalf("secrets keyring: %v", err)
	}
	env.Secrets = secrets.New(st, keys, logger)
	buildsFor := opts.BuildsFor
	if buildsFor == nil {
		buildsFor = []string{env.Provider.Name()}
	}
	env.Runtimes = runtime.New(runtime.Config{
		Store:   st,
		Secrets: env.Secrets,
		AgentEnv: func(ctx context.Context, sb store.Sandbox) (map[string]string, error) {
			e, err := env.Secrets.Env(ctx, sb)
			if err != nil {
				return nil, err
			}
			maps.Copy(e, sidecar.Env(ctx, st, sb))
			return e, nil
		},
		Providers: reg,
		Instance:  env.Instance,
		Defaults: runtime.Defaults{
			Image:         opts.Image,
			AllowedImages: allowed,
			ArchiveAfter:  opts.ArchiveAfter,
		},
		WarmPools:      opts.WarmPools,
		Now:            now,
		Logger:         logger,
		Billing:        meter,
		Images:         runtime.ImageBuildsOf(opts.Builds),
		ImageProviders: buildsFor,
	})
	env.Ledger = ledger.New(ledger.Config{
		Store: st, Meter: meter, Runtimes: env.Runtimes, NewOrgMicros: opts.NewOrgMicros, Now: now, Logger: logger,
	})
	env.Bindings = binding.New(binding.Config{Store: st, Runtimes: env.Runtimes, Logger: logger, Now: now})
	env.Sessions = session.New(session.Config{Store: st, Runtimes: env.Runtimes, Bindings: env.Bindings, Secrets: env.Secrets, Logger: logger, Now: now})
	sessionKey, err := auth.LoadSessionKey(dataDir, "")
	if err != nil {
		t.Fatalf("session key: %v", err)
	}
	env.SignIn = &auth.SignIn{Store: st, Key: sessionKey, Now: now}
	env.Server = httptest.NewUnstartedServer(nil)
	preview := opts.Preview
	if _, port, err := net.SplitHostPort(env.Server.Listener.Addr().String()); err == nil && preview.Port == "" {
		preview.Port = port
	}
	h := api.New(api.Config{Store: st, Runtimes: env.Runtimes, Providers: reg, Now: now, Logger: logger,
		Secrets: env.Secrets, Limits: opts.Limits, Preview: preview, Members: opts.Members, Builds: opts.Builds})
	h.Mount(api.Credits(env.Ledger), api.SignIn(env.SignIn), api.Capabilities(env.Bindings), api.Sessions(env.Sessions))
	h.Mount(opts.Mount...)
	env.API = h
	// Every request and answer is held to api/openapi.yaml (spec.go).
	var served http.Handler = newSpecCheck(t).wrap(h, h.IsPreview)
	if opts.NoSpecCheck {
		served = h
	}
	if opts.Wrap != nil {
		served = opts.Wrap(served)
	}
	env.Server.Config.Handler = served
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	env.Server.Config.Protocols = &protos
	env.Server.Start()
	env.SignIn.Domain = strings.TrimPrefix(env.Server.URL, "http://")
	t.Cleanup(env.Server.Close)
	// Runs before the server closes: ends streams to sandbox agents,
	// which the server would otherwise wait for.
	t.Cleanup(func() { _ = env.Runtimes.Close() })
	t.Cleanup(env.Bindings.Close) // runs first: applies use the agents
	env.URL = env.Server.URL

	key, _, err := auth.Keys{Store: st, Now: now}.CreateInstallation(ctx, "test admin", "")
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	env.Key = key
	return env
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
