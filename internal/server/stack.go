package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fleetevents"
	"github.com/paddockhq/paddock/internal/host"
	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/task"
	"github.com/paddockhq/paddock/internal/workflow"
	"github.com/paddockhq/paddock/internal/world"
)

// Overrides are what a test gives the server's components in place of
// what they would make from the configuration (internal/server/servertest
// is their user). The zero value overrides nothing: the server as Run
// builds it.
type Overrides struct {
	// Listener is the API's door, in place of one bound on cfg.Listen;
	// with Serve, only its address is used (preview URLs, sign-in).
	Listener net.Listener
	// Serve serves the HTTP component's server in place of serving it on
	// the door itself: an httptest server over Listener.
	Serve func(*http.Server)
	// Providers are registered as they are (no circuit breaker), the
	// first the default, in place of the configured ones.
	Providers []provider.Provider
	// Now is the clock of the services and the API; nil: time.Now.
	Now func() time.Time
	// Pricing prices compute in place of the configured rates.
	Pricing *ledger.Pricing
	// WarmPools are the warm pools in place of the configured ones.
	WarmPools []runtime.WarmPool
	// Builds are images built by the caller (it runs them), for the
	// providers BuildsFor, in place of the configured image builder.
	Builds    *imagebuild.Builder
	BuildsFor []string
	// Limits are the API's limits in place of the configured ones.
	Limits *api.Limits
	// Preview configures preview URLs in place of the configuration; its
	// Port defaults to the door's.
	Preview *api.Preview
	// E2BDomain is the E2B-compatible surface's domain (e2b.Config).
	E2BDomain string
	// Mount are API features mounted besides the components'; one named
	// as a component's takes its place (a test's own metrics).
	Mount []api.Feature
	// Wrap, when set, is what the HTTP component serves, made from the
	// API: to hold every request and answer to the spec.
	Wrap func(*api.API) http.Handler
	// Manual: the caller drives what the server would run in the
	// background. No settler, no start-up reconciliation or lifecycle
	// rounds, and a shutdown cuts streams to sandbox agents at once.
	Manual bool
}

// Stack is the server's components, initialised: what Run serves, and
// what a test serves through Overrides.
type Stack struct {
	set   *component.Set
	order []string
	doors *doors
	http  *httpServer
}

// Build opens the doors and initialises the server's components in the
// order of what they require, as Run does, with o in place of what it
// names. Nothing serves until Start.
func Build(ctx context.Context, cfg config.Config, logger *slog.Logger, out io.Writer, o Overrides) (*Stack, error) {
	return build(ctx, cfg, logger, out, o)
}

// build is Build with more components after the server's (a test's).
func build(ctx context.Context, cfg config.Config, logger *slog.Logger, out io.Writer, o Overrides, more ...component.Registration) (*Stack, error) {
	d, err := openDoorsFor(cfg, o)
	if err != nil {
		return nil, err
	}
	return newWiring(cfg, logger, out, d, o).build(ctx, more...)
}

// newWiring is what the components of a run with cfg share; each reads
// its own section of cfg.
func newWiring(cfg config.Config, logger *slog.Logger, out io.Writer, d *doors, o Overrides) *wiring {
	w := &wiring{sections: cfg.Section, dataDir: cfg.DataDir, egress: cfg.Egress, logger: logger, out: out, doors: d, o: o, now: o.Now,
		replica: replicaID(cfg.ReplicaID, cfg.DataDir, cfg.Listen), leaseTTL: cfg.LeaseTTL}
	if w.now == nil {
		w.now = time.Now
	}
	return w
}

// build initialises w's components, and more, each given its section;
// when it fails, it closes the doors.
func (w *wiring) build(ctx context.Context, more ...component.Registration) (*Stack, error) {
	reg, err := component.NewRegistry(append(w.components(), more...)...)
	if err != nil {
		w.doors.close()
		return nil, err
	}
	reg.UseSections(w.sections)
	set, err := reg.Init(ctx, ShutdownTimeout)
	if err != nil {
		w.doors.close()
		return nil, err
	}
	h, _ := set.Get(httpName).(*httpServer)
	return &Stack{set: set, order: reg.Order(), doors: w.doors, http: h}, nil
}

// openDoorsFor binds the doors cfg names, the API's unless o gives it.
func openDoorsFor(cfg config.Config, o Overrides) (*doors, error) {
	if o.Listener == nil {
		if o.Serve != nil {
			return nil, errNoServe
		}
		return openDoors(cfg)
	}
	sshd, err := listenSSH(cfg)
	if err != nil {
		return nil, err
	}
	return &doors{api: o.Listener, ssh: sshd}, nil
}

// ComponentNames are the names of the components Run builds, in the
// order they initialise.
func ComponentNames() ([]string, error) {
	reg, err := component.NewRegistry((&wiring{}).components()...)
	if err != nil {
		return nil, err
	}
	return reg.Order(), nil
}

// Components are the names of s's components, in the order they were
// initialised.
func (s *Stack) Components() []string { return s.order }

// Start starts the components, in order, now that every one is
// initialised: the access component, which creates the first admin key
// when the store has none; the image builds; the settler, the start-up
// reconciliation and the lifecycle rounds (unless Overrides.Manual); the
// SSH gateway; then the HTTP component, which serves the API. It does
// not wait.
func (s *Stack) Start(ctx context.Context) error { return s.set.Start(ctx) }

// serve starts s, then calls started, and returns when ctx ends or
// serving fails.
func (s *Stack) serve(ctx context.Context, started func()) error {
	err := s.Start(ctx)
	started()
	if err != nil {
		return err
	}
	return s.http.wait(ctx)
}

// Close stops serving and closes the components in reverse order, all
// under ctx's deadline, then the doors.
func (s *Stack) Close(ctx context.Context) error {
	err := s.set.Close(ctx)
	s.doors.close()
	return err
}

// Store is the store component's store.
func (s *Stack) Store() store.Store { return s.http.in.st }

// Instance is the installation id.
func (s *Stack) Instance() string { return s.http.in.id }

// Runtimes is the runtime service.
func (s *Stack) Runtimes() *runtime.Service { return s.http.runtime.svc }

// Events is the events component's hub.
func (s *Stack) Events() *fleetevents.Hub { return getAs[*eventsPart](s.set, eventsName).hub }

// Ledger is the ledger component's ledger.
func (s *Stack) Ledger() *ledger.Ledger { return getAs[*ledgerPart](s.set, ledgerName).ledger }

// Secrets is the secrets service.
func (s *Stack) Secrets() *secrets.Service { return getAs[*secrets.Service](s.set, secretsName) }

// Bindings is the bindings service.
func (s *Stack) Bindings() *binding.Service { return getAs[*binding.Service](s.set, bindingsName) }

// Sessions is the sessions service.
func (s *Stack) Sessions() *session.Service { return getAs[*session.Service](s.set, sessionsName) }

// Tasks is the tasks component's service.
func (s *Stack) Tasks() *task.Service { return getAs[*tasksPart](s.set, tasksName).svc }

// Workflows is the workflow service.
func (s *Stack) Workflows() *workflow.Service {
	p := getAs[*workflowsPart](s.set, workflowsName)
	if p == nil {
		return nil
	}
	return p.svc
}

// Worlds is the worlds component's service.
func (s *Stack) Worlds() *world.Service { return getAs[*worldsPart](s.set, worldsName).svc }

// Hosts keeps the machines orgs brought.
func (s *Stack) Hosts() *host.Service { return getAs[*host.Service](s.set, hostsName) }

// SignIn is the API's wallet sign-in.
func (s *Stack) SignIn() *auth.SignIn { return s.http.access.signIn }

// Access is the access service every door asks.
func (s *Stack) Access() *iam.Service { return s.http.access.svc }

// API is the API the HTTP component serves.
func (s *Stack) API() *api.API { return s.http.api }

// getAs is a component's instance as a T.
func getAs[T any](set *component.Set, name string) T {
	t, _ := set.Get(name).(T)
	return t
}

// errNoServe: Overrides.Serve without the listener it serves on.
var errNoServe = errors.New("server: Overrides.Serve needs Overrides.Listener")
