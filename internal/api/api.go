// Package api is paddock's HTTP API: one file per resource, handlers that
// return their error to one adapter (handle, below), one error body written
// by one function (errors.go), strict JSON decoding (decode.go), and the
// route table below, which a test holds to api/openapi.yaml.
package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/store"
)

// Config wires an API.
type Config struct {
	Store     store.Store
	Runtimes  *runtime.Service
	Providers *provider.Registry
	Now       func() time.Time
	Logger    *slog.Logger
	// Ready reports whether the server is ready to serve; nil = always.
	Ready func() bool
	// Ledger keeps credits; nil answers the credit routes 501.
	Ledger *ledger.Ledger
	// Secrets keeps secrets.
	Secrets *secrets.Service
	// Metrics records requests and serves GET /metrics; nil: neither.
	Metrics *metrics.Metrics
	// Reconciling, when set, reports whether start-up reconciliation is
	// still running (a readiness check).
	Reconciling func() bool
	// Logs holds what the server logged about each sandbox, for
	// GET …/sandboxes/{id}/logs; nil: only the ledger's record.
	Logs *logs.Book
	// Bindings keeps capability inventories and bindings; nil answers
	// those routes 501.
	Bindings *binding.Service
	// Sessions runs prompts and tasks; nil answers them 501.
	Sessions *session.Service
	// Images are the sandbox images /api/capabilities describes (the
	// default one first); nil: the runtime service's default image.
	Images []string
}

// API serves HTTP.
type API struct {
	store       store.Store
	runtimes    *runtime.Service
	providers   *provider.Registry
	keys        auth.Keys
	logger      *slog.Logger
	ready       func() bool
	now         func() time.Time
	mux         *http.ServeMux
	ledger      *ledger.Ledger
	secrets     *secrets.Service
	metrics     *metrics.Metrics
	reconciling func() bool
	logs        *logs.Book
	bindings    *binding.Service
	sessions    *session.Service
	images      []string
}

// Route is one entry of the route table.
type Route struct {
	Method  string
	Pattern string
	Auth    bool
	handler handlerFunc
}

// handlerFunc is the one shape of a handler here: it returns its error
// rather than writing it, and handle answers it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts h: the error it returns, before it has written anything,
// is answered with the one error body. Once a stream has begun, the
// handler reports failures itself.
func (a *API) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.fail(r.Context(), w, err)
		}
	}
}

// New returns an API.
func New(cfg Config) *API {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	a := &API{
		store:       cfg.Store,
		runtimes:    cfg.Runtimes,
		providers:   cfg.Providers,
		keys:        auth.Keys{Store: cfg.Store, Now: now},
		logger:      cfg.Logger,
		ready:       cfg.Ready,
		now:         func() time.Time { return now().UTC().Truncate(time.Microsecond) },
		mux:         http.NewServeMux(),
		ledger:      cfg.Ledger,
		secrets:     cfg.Secrets,
		metrics:     cfg.Metrics,
		reconciling: cfg.Reconciling,
		logs:        cfg.Logs,
		bindings:    cfg.Bindings,
		sessions:    cfg.Sessions,
		images:      cfg.Images,
	}
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	if a.ready == nil {
		a.ready = func() bool { return true }
	}
	for _, rt := range a.Routes() {
		h := http.Handler(a.handle(rt.handler))
		if rt.Auth {
			h = a.requireKey(h)
		}
		a.mux.Handle(rt.Method+" "+rt.Pattern, h)
	}
	return a
}

const (
	wsPrefix = "/api/v1/org/{org}/ws/{workspace}"
	rtPrefix = wsPrefix + "/runtimes/{runtime_id}"
)

// Routes is the route table.
func (a *API) Routes() []Route {
	return []Route{
		{"GET", "/health", false, a.health},
		{"GET", "/readyz", false, a.readyz},
		{"GET", "/metrics", false, a.serveMetrics},
		{"GET", "/api/openapi.json", false, a.openapi},
		{"GET", "/api/capabilities", true, a.capabilities},
		{"GET", "/api/provisions", true, a.listProvisions},

		{"POST", "/api/v1/orgs", true, a.createOrg},
		{"GET", "/api/v1/orgs", true, a.listOrgs},
		{"GET", "/api/v1/org/{org}", true, a.getOrg},

		{"POST", "/api/v1/org/{org}/ws", true, a.createWorkspace},
		{"GET", "/api/v1/org/{org}/ws", true, a.listWorkspaces},
		{"GET", wsPrefix, true, a.getWorkspace},

		{"POST", wsPrefix + "/projects", true, a.createProject},
		{"GET", wsPrefix + "/projects", true, a.listProjects},
		{"GET", wsPrefix + "/projects/{project}", true, a.getProject},
		{"DELETE", wsPrefix + "/projects/{project}", true, a.deleteProject},

		{"GET", wsPrefix + "/runtimes", true, a.listRuntimes},
		{"GET", rtPrefix, true, a.getRuntime},
		{"PATCH", rtPrefix, true, a.configureRuntime},
		{"GET", rtPrefix + "/egress", true, a.listEgress},
		{"POST", rtPrefix + "/start", true, a.startRuntime},
		{"POST", rtPrefix + "/pause", true, a.pauseRuntime},
		{"POST", rtPrefix + "/resume", true, a.resumeRuntime},
		{"POST", rtPrefix + "/reset", true, a.resetRuntime},
		{"POST", rtPrefix + "/keepalive", true, a.keepaliveRuntime},

		// Inside the runtime's sandbox, through its agent.
		{"POST", rtPrefix + "/exec", true, a.exec},
		{"GET", rtPrefix + "/processes", true, a.listProcesses},
		{"GET", rtPrefix + "/processes/{process_id}", true, a.getProcess},
		{"GET", rtPrefix + "/processes/{process_id}/attach", true, a.attachProcess},
		{"POST", rtPrefix + "/processes/kill-all", true, a.killAllProcesses},
		{"POST", rtPrefix + "/processes/{process_id}/signal", true, a.signalProcess},
		{"POST", rtPrefix + "/processes/{process_id}/stdin", true, a.writeStdin},
		{"GET", rtPrefix + "/files", true, a.readFile},
		{"PUT", rtPrefix + "/files", true, a.writeFile},
		{"DELETE", rtPrefix + "/files", true, a.deleteFile},
		{"GET", rtPrefix + "/files/stat", true, a.statFile},
		{"GET", rtPrefix + "/files/list", true, a.listFiles},
		{"POST", rtPrefix + "/files/mkdir", true, a.mkdir},
		{"POST", rtPrefix + "/files/rename", true, a.rename},
		{"GET", rtPrefix + "/files/tar", true, a.downloadTar},
		{"POST", rtPrefix + "/files/tar", true, a.uploadTar},
		{"GET", rtPrefix + "/terminal", true, a.terminal},

		// What an agent brings into its runtime, and runs there.
		{"GET", "/api/v1/catalog", true, a.listCatalog},
		{"GET", "/api/v1/org/{org}/capabilities", true, a.listInventory},
		{"POST", "/api/v1/org/{org}/capabilities", true, a.pushCapability},
		{"DELETE", "/api/v1/org/{org}/capabilities/{name}/{version}", true, a.deleteCapabilityVersion},
		{"GET", rtPrefix + "/capabilities", true, a.listBindings},
		{"POST", rtPrefix + "/capabilities", true, a.installCapability},
		{"GET", rtPrefix + "/capabilities/resolved", true, a.resolvedCapabilities},
		{"PATCH", rtPrefix + "/capabilities/{binding_id}", true, a.updateBinding},
		{"DELETE", rtPrefix + "/capabilities/{binding_id}", true, a.uninstallCapability},
		{"POST", rtPrefix + "/prompt", true, a.prompt},
		{"POST", rtPrefix + "/task", true, a.task},
		{"GET", rtPrefix + "/sessions", true, a.listSessions},
		{"GET", rtPrefix + "/sessions/{session_id}", true, a.getSession},

		{"GET", "/api/v1/org/{org}/credits", true, a.getCredits},
		{"POST", "/api/v1/org/{org}/credits/grants", true, a.grantCredits},
		{"POST", "/api/v1/org/{org}/credits/balance", true, a.setCreditBalance},
		{"GET", "/api/v1/org/{org}/credits/journal", true, a.listCreditJournal},
		{"GET", "/api/v1/org/{org}/usage", true, a.getUsage},
		{"GET", wsPrefix + "/members", true, a.listMembers},
		{"POST", wsPrefix + "/members", true, a.addMember},
		{"DELETE", wsPrefix + "/members/{member}", true, a.removeMember},
		{"GET", wsPrefix + "/member-limit", true, a.getMemberLimit},
		{"PUT", wsPrefix + "/member-limit", true, a.setMemberLimit},

		{"POST", "/api/v1/org/{org}/secrets", true, a.createSecret},
		{"GET", "/api/v1/org/{org}/secrets", true, a.listSecrets},
		{"GET", "/api/v1/org/{org}/secrets/{secret}", true, a.getSecret},
		{"PUT", "/api/v1/org/{org}/secrets/{secret}", true, a.replaceSecret},
		{"DELETE", "/api/v1/org/{org}/secrets/{secret}", true, a.deleteSecret},
		{"POST", wsPrefix + "/secrets", true, a.createSecret},
		{"GET", wsPrefix + "/secrets", true, a.listSecrets},
		{"GET", wsPrefix + "/secrets/{secret}", true, a.getSecret},
		{"PUT", wsPrefix + "/secrets/{secret}", true, a.replaceSecret},
		{"DELETE", wsPrefix + "/secrets/{secret}", true, a.deleteSecret},

		{"GET", "/api/v1/org/{org}/sandboxes", true, a.listSandboxes},
		{"GET", "/api/v1/org/{org}/sandboxes/{sandbox}", true, a.getSandbox},
		{"DELETE", "/api/v1/org/{org}/sandboxes/{sandbox}", true, a.killSandbox},
		{"GET", "/api/v1/org/{org}/sandboxes/{sandbox}/logs", true, a.sandboxLogs},
	}
}

// ServeHTTP routes a request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.withRequest(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := a.mux.Handler(r); pattern == "" {
			a.mux.ServeHTTP(&unmatched{ResponseWriter: w, r: r, a: a}, r)
			return
		}
		a.mux.ServeHTTP(w, r)
	})).ServeHTTP(w, r)
}
