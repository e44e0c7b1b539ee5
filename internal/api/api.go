// Package api is paddock's HTTP API: one file per resource, handlers that
// return their error to one adapter (handle, below), one error body written
// by one function (errors.go), strict JSON decoding (decode.go), and the
// route table: the core routes below and the features the server's
// components mount (features.go); with every feature mounted, a test
// holds it to api/openapi.yaml.
package api

import (
	"log/slog"
	"net/http"
	"slices"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/clientaddr"
	"github.com/paddockhq/paddock/internal/e2b"
	"github.com/paddockhq/paddock/internal/host"
	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/preview"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/internal/task"
	"github.com/paddockhq/paddock/internal/templatebuild"
	"github.com/paddockhq/paddock/internal/tenancy"
	"github.com/paddockhq/paddock/internal/workflow"
	"github.com/paddockhq/paddock/internal/world"
)

// Config wires an API: the services every API has. What only some have
// (credits, sessions, sign-in, the SSH gateway, metrics) is mounted as a
// Feature instead.
type Config struct {
	// Access is the identity and access service every route asks.
	Access *iam.Service
	// Tenancy keeps orgs, workspaces and projects.
	Tenancy   *tenancy.Service
	Runtimes  *runtime.Service
	Providers *provider.Registry
	Now       func() time.Time
	Logger    *slog.Logger
	// Ready reports whether the server is ready to serve; nil = always.
	Ready func() bool
	// Secrets keeps secrets.
	Secrets *secrets.Service
	// Reconciling, when set, reports whether start-up reconciliation is
	// still running (a readiness check).
	Reconciling func() bool
	// Leases are this replica's leases on the background loops, which
	// /readyz shows with the replica's id; nil: none.
	Leases *lease.Elector
	// Logs holds what the server logged about each sandbox, for
	// GET …/sandboxes/{id}/logs; nil: only the ledger's record.
	Logs *logs.Book
	// Images are the sandbox images /api/capabilities describes (the
	// default one first); nil: the runtime service's default image.
	Images []string
	// Limits are the rate limits, session caps and body limits; zero
	// fields take DefaultLimits.
	Limits Limits
	// LimitState keeps the rate limits' buckets and the sessions the caps
	// count; nil keeps them in this process (one server). Replicas share
	// theirs: SharedLimits.
	LimitState LimitState
	// Clients finds the address a request came from: the peer, or behind
	// a trusted proxy the client it forwarded (clientaddr.Resolver); the
	// zero value trusts no proxy.
	Clients clientaddr.Resolver
	// Preview configures preview URLs (preview.go).
	Preview Preview
	// E2B configures the E2B-compatible surface (e2b.go).
	E2B E2B
	// Builds are the images the server builds in the background, for
	// GET /api/images; nil: it builds none.
	Builds *imagebuild.Builder
}

// API serves HTTP.
type API struct {
	runtimes *runtime.Service
	// path reaches the agents of the runtime routes' runtimes, as every
	// door does (iam.Path).
	path        iam.Path
	providers   *provider.Registry
	iam         *iam.Service
	logger      *slog.Logger
	ready       func() bool
	now         func() time.Time
	mux         *http.ServeMux
	ledger      *ledger.Ledger
	secrets     *secrets.Service
	metrics     *metrics.Metrics
	reconciling func() bool
	leases      *lease.Elector
	logs        *logs.Book
	bindings    *binding.Service
	sessions    *session.Service
	tasks       *task.Service
	worlds      *world.Service
	snapshots   *snapshot.Service
	workflows   *workflow.Service
	tplBuilds   *templatebuild.Service
	hosts       *host.Service
	images      []string
	signin      *iam.SignIn
	limits      Limits
	state       LimitState
	clients     clientaddr.Resolver
	execCaps    *caps
	termCaps    *caps
	mcpCaps     *caps // mcp.go
	live        live
	preview     Preview
	ssh         *sshgw.Info
	builds      *imagebuild.Builder
	tenancy     *tenancy.Service
	// events is the live event stream (events.go); nil until mounted.
	events *eventsFeature
	// previews is the preview gateway (preview.go).
	previews *preview.Gateway
	// e2b is the E2B-compatible surface (e2b.go).
	e2b *e2b.Gateway
	// instance is the runtime an installation in instance mode serves
	// under /api/sandbox (instance.go); nil until mounted.
	instance func() (Sandbox, bool)
	// mcp is the MCP server at /mcp (mcp.go); nil until mounted.
	mcp http.Handler
	// console serves the web console at the paths no route or preview
	// takes (console.go); nil: none.
	console http.Handler

	// routes are the core routes and those of the features mounted.
	routes []Route
	// mounted are the names of the features mounted (features.go).
	mounted map[string]bool
}

// Route is one entry of the route table.
type Route struct {
	Method  string
	Pattern string
	// Need is what the route asks of its caller (authz.go).
	Need Need
	// Narrow lets a key narrowed to one workspace use this org-wide
	// route; the handler keeps it to its workspace.
	Narrow bool
	// Body is the class of the route's body limit.
	Body    body
	handler handlerFunc
	// scoped, when set, is the pattern whose org and workspace the route
	// is authorized in (an instance route's runtime route, instance.go);
	// door, when set, goes before the guard (it names them).
	scoped string
	door   func(http.Handler) http.Handler
}

// scope is the pattern the route is authorized by: its own, or the
// runtime route an instance route mirrors.
func (rt Route) scope() string {
	if rt.scoped != "" {
		return rt.scoped
	}
	return rt.Pattern
}

func route(method, pattern string, need Need, h handlerFunc) Route {
	return Route{Method: method, Pattern: pattern, Need: need, handler: h}
}

// narrow marks an org-wide route a narrowed key may use.
func (rt Route) narrow() Route { rt.Narrow = true; return rt }

// upload gives the route the upload body limit.
func (rt Route) upload() Route { rt.Body = uploadBody; return rt }

// bundle gives the route the capability bundle body limit.
func (rt Route) bundle() Route { rt.Body = bundleBody; return rt }

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
		runtimes:    cfg.Runtimes,
		providers:   cfg.Providers,
		iam:         cfg.Access,
		logger:      cfg.Logger,
		ready:       cfg.Ready,
		now:         func() time.Time { return now().UTC().Truncate(time.Microsecond) },
		mux:         http.NewServeMux(),
		mounted:     map[string]bool{},
		secrets:     cfg.Secrets,
		reconciling: cfg.Reconciling,
		leases:      cfg.Leases,
		logs:        cfg.Logs,
		images:      cfg.Images,
		limits:      cfg.Limits.withDefaults(),
		clients:     cfg.Clients,
		preview:     cfg.Preview,
		builds:      cfg.Builds,
		tenancy:     cfg.Tenancy,
	}
	a.path = iam.Path{Access: a.iam, Agents: a.runtimes}
	if a.preview.Scheme == "" {
		a.preview.Scheme = "http"
	}
	a.state = cfg.LimitState
	if a.state == nil {
		a.state = newLocalLimits(now)
	}
	a.execCaps = &caps{kind: "exec_streams", perRuntime: a.limits.ExecPerRuntime, perUser: a.limits.ExecPerUser, state: a.state}
	a.termCaps = &caps{kind: "terminals", perRuntime: a.limits.TerminalsPerRuntime, perUser: a.limits.TerminalsPerUser, state: a.state}
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	if a.ready == nil {
		a.ready = func() bool { return true }
	}
	a.previews = a.newPreviews()
	a.e2b = a.newE2B(cfg.E2B)
	a.add(a.coreRoutes())
	return a
}

// add routes rts.
func (a *API) add(rts []Route) {
	for _, rt := range rts {
		h := a.guard(rt, a.handle(rt.handler))
		if rt.door != nil {
			h = rt.door(h)
		}
		a.mux.Handle(rt.Method+" "+rt.Pattern, h)
	}
	a.routes = append(a.routes, rts...)
}

const (
	wsPrefix = "/api/v1/org/{org}/ws/{workspace}"
	rtPrefix = wsPrefix + "/runtimes/{runtime_id}"
)

// Routes is the route table: the core routes, then those of the features
// mounted. Each route says what it needs of its caller (authz.go): public
// routes need nothing, "any" routes any credential, installation routes
// the installation admin, and every route in an org at least a role there.
func (a *API) Routes() []Route { return slices.Clone(a.routes) }

// coreRoutes are the routes every API has, by group.
func (a *API) coreRoutes() []Route {
	return slices.Concat(a.metaRoutes(), a.identityRoutes(), a.orgRoutes(), a.runtimeRoutes(),
		a.agentRoutes(), a.secretRoutes(), a.ledgerRoutes(), a.installationRoutes())
}

// metaRoutes are the probes and what the server offers.
func (a *API) metaRoutes() []Route {
	return []Route{
		route("GET", "/health", public, a.health),
		route("GET", "/readyz", public, a.readyz),
		route("GET", "/api/openapi.json", public, a.openapi),
		route("GET", "/api/capabilities", anyone, a.capabilities),
		route("GET", "/api/images", anyone, a.listImages),
		route("GET", "/api/provisions", anyone, a.listProvisions),
	}
}

// identityRoutes are who the caller is, and the installation admin's
// users and installation-wide keys.
func (a *API) identityRoutes() []Route {
	return []Route{
		route("GET", "/api/v1/me", anyone, a.me),
		route("GET", "/api/v1/me/ssh-keys", anyone, a.listSSHKeys),
		route("POST", "/api/v1/me/ssh-keys", anyone, a.addSSHKey),
		route("DELETE", "/api/v1/me/ssh-keys/{key_id}", anyone, a.deleteSSHKey),
		route("GET", "/api/v1/invitations", anyone, a.listInvitations),
		route("POST", "/api/v1/invitations/{invitation}/accept", anyone, a.acceptInvitation),
		route("POST", "/api/v1/invitations/{invitation}/decline", anyone, a.declineInvitation),

		route("POST", "/api/v1/users", installation, a.createUser),
		route("GET", "/api/v1/users", installation, a.listUsers),
		route("GET", "/api/v1/users/{user}", installation, a.getUser),
		route("PATCH", "/api/v1/users/{user}", installation, a.updateUser),
		route("DELETE", "/api/v1/users/{user}", installation, a.deleteUser),
		route("GET", "/api/v1/keys", installation, a.listInstallationKeys),
		route("POST", "/api/v1/keys", installation, a.createInstallationKey),
		route("DELETE", "/api/v1/keys/{key_id}", installation, a.revokeInstallationKey),
	}
}

// orgRoutes are orgs, their members, invitations and keys, workspaces,
// projects and templates.
func (a *API) orgRoutes() []Route {
	return []Route{
		route("POST", "/api/v1/orgs", installation, a.createOrg),
		route("GET", "/api/v1/orgs", anyone, a.listOrgs),
		route("GET", "/api/v1/org/{org}", viewer, a.getOrg).narrow(),

		route("GET", "/api/v1/org/{org}/members", viewer, a.listOrgMembers),
		route("POST", "/api/v1/org/{org}/members", admin, a.addOrgMember),
		route("PATCH", "/api/v1/org/{org}/members/{member}", admin, a.setOrgMemberRole),
		route("DELETE", "/api/v1/org/{org}/members/{member}", admin, a.removeOrgMember),
		route("GET", "/api/v1/org/{org}/invitations", admin, a.listOrgInvitations),
		route("DELETE", "/api/v1/org/{org}/invitations/{invitation}", admin, a.revokeInvitation),
		route("GET", "/api/v1/org/{org}/keys", viewer, a.listKeys),
		route("POST", "/api/v1/org/{org}/keys", member, a.createKey),
		route("DELETE", "/api/v1/org/{org}/keys/{key_id}", member, a.revokeKey),

		route("POST", "/api/v1/org/{org}/ws", admin, a.createWorkspace),
		route("GET", "/api/v1/org/{org}/ws", viewer, a.listWorkspaces).narrow(),
		route("GET", wsPrefix, viewer, a.getWorkspace),

		route("POST", wsPrefix+"/projects", admin, a.createProject),
		route("GET", wsPrefix+"/projects", viewer, a.listProjects),
		route("GET", wsPrefix+"/projects/{project}", viewer, a.getProject),
		route("DELETE", wsPrefix+"/projects/{project}", admin, a.deleteProject),

		route("POST", wsPrefix+"/templates", admin, a.createTemplate),
		route("GET", wsPrefix+"/templates", viewer, a.listTemplates),
		route("GET", wsPrefix+"/templates/{template}", viewer, a.getTemplate),
		route("DELETE", wsPrefix+"/templates/{template}", admin, a.deleteTemplate),
	}
}

// runtimeRoutes are runtimes and their actions.
func (a *API) runtimeRoutes() []Route {
	return []Route{
		route("GET", wsPrefix+"/runtimes", viewer, a.listRuntimes),
		route("GET", rtPrefix, viewer, a.getRuntime),
		route("PATCH", rtPrefix, admin, a.configureRuntime),
		route("GET", rtPrefix+"/egress", viewer, a.listEgress),
		route("POST", rtPrefix+"/start", member, a.startRuntime),
		route("POST", rtPrefix+"/pause", member, a.pauseRuntime),
		route("POST", rtPrefix+"/resume", member, a.resumeRuntime),
		route("POST", rtPrefix+"/reset", member, a.resetRuntime),
		route("POST", rtPrefix+"/keepalive", member, a.keepaliveRuntime),
		route("GET", rtPrefix+"/secrets", viewer, a.listRuntimeSecrets),
		route("PUT", rtPrefix+"/secrets/{secret}", admin, a.bindRuntimeSecret),
		route("DELETE", rtPrefix+"/secrets/{secret}", admin, a.unbindRuntimeSecret),
	}
}

// agentRoutes operate inside the runtime's sandbox, through its agent.
func (a *API) agentRoutes() []Route {
	return []Route{
		route("POST", rtPrefix+"/exec", member, a.exec),
		route("GET", rtPrefix+"/processes", member, a.listProcesses),
		route("GET", rtPrefix+"/processes/{process_id}", member, a.getProcess),
		route("GET", rtPrefix+"/processes/{process_id}/attach", member, a.attachProcess),
		route("POST", rtPrefix+"/processes/kill-all", member, a.killAllProcesses),
		route("POST", rtPrefix+"/processes/{process_id}/signal", member, a.signalProcess),
		route("POST", rtPrefix+"/processes/{process_id}/stdin", member, a.writeStdin).upload(),
		route("GET", rtPrefix+"/files", member, a.readFile),
		route("PUT", rtPrefix+"/files", member, a.writeFile).upload(),
		route("DELETE", rtPrefix+"/files", member, a.deleteFile),
		route("GET", rtPrefix+"/files/stat", member, a.statFile),
		route("GET", rtPrefix+"/files/list", member, a.listFiles),
		route("POST", rtPrefix+"/files/mkdir", member, a.mkdir),
		route("POST", rtPrefix+"/files/rename", member, a.rename),
		route("GET", rtPrefix+"/files/tar", member, a.downloadTar),
		route("POST", rtPrefix+"/files/tar", member, a.uploadTar).upload(),
		route("GET", rtPrefix+"/terminal", member, a.terminal),
		// Ports inside the sandbox; the proxy to them (preview.go) is not a
		// route: it answers any method under …/ports/{port}/ and on
		// preview hosts.
		route("GET", rtPrefix+"/previews", member, a.listPorts),
		route("PATCH", rtPrefix+"/previews/{port}", admin, a.setPort),
	}
}

// secretRoutes are an org's and a workspace's secrets.
func (a *API) secretRoutes() []Route {
	return []Route{
		route("POST", "/api/v1/org/{org}/secrets", admin, a.createSecret),
		route("GET", "/api/v1/org/{org}/secrets", viewer, a.listSecrets),
		route("GET", "/api/v1/org/{org}/secrets/{secret}", viewer, a.getSecret),
		route("PUT", "/api/v1/org/{org}/secrets/{secret}", admin, a.replaceSecret),
		route("DELETE", "/api/v1/org/{org}/secrets/{secret}", admin, a.deleteSecret),
		route("POST", wsPrefix+"/secrets", admin, a.createSecret),
		route("GET", wsPrefix+"/secrets", viewer, a.listSecrets),
		route("GET", wsPrefix+"/secrets/{secret}", viewer, a.getSecret),
		route("PUT", wsPrefix+"/secrets/{secret}", admin, a.replaceSecret),
		route("DELETE", wsPrefix+"/secrets/{secret}", admin, a.deleteSecret),
	}
}

// ledgerRoutes are the sandbox ledger: each workspace's rows are its own.
func (a *API) ledgerRoutes() []Route {
	return []Route{
		route("GET", "/api/v1/org/{org}/sandboxes", viewer, a.listSandboxes).narrow(),
		route("GET", "/api/v1/org/{org}/sandboxes/{sandbox}", viewer, a.getSandbox).narrow(),
		route("DELETE", "/api/v1/org/{org}/sandboxes/{sandbox}", member, a.killSandbox).narrow(),
		route("GET", "/api/v1/org/{org}/sandboxes/{sandbox}/logs", viewer, a.sandboxLogs).narrow(),
	}
}

// ServeHTTP routes a request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.withRequest(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.servePreview(w, r) || a.serveInstancePort(w, r) || a.serveE2B(w, r) || a.serveMCP(w, r) {
			return
		}
		if _, pattern := a.mux.Handler(r); pattern == "" {
			if a.ServesConsole(r) {
				a.console.ServeHTTP(w, r)
				return
			}
			a.mux.ServeHTTP(&unmatched{ResponseWriter: w, r: r, a: a}, r)
			return
		}
		a.mux.ServeHTTP(w, r)
	})).ServeHTTP(w, r)
}
