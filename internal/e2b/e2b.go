// Package e2b is paddock's E2B-compatible surface: what the published e2b
// SDKs (npm `e2b`, PyPI `e2b`) call, served over paddock's own model. An
// E2B sandbox is a paddock runtime, billed, expired, paused, archived and
// audited like any other; an E2B API key is a paddock key.
//
// Two parts, reached two ways:
//
//   - the control-plane REST API (rest.go: /sandboxes, /v2/sandboxes, …),
//     at /e2b/… on the API's listener, or at the root of host
//     api.<domain> when a domain is configured;
//   - envd, the in-sandbox API (envd.go: /health, /files and the Connect
//     services process.Process and filesystem.Filesystem), which the SDK
//     routes by its E2b-Sandbox-Id and E2b-Sandbox-Port headers (at
//     /e2b/… with those headers) or by host <port>-<sandbox id>.<domain>.
//     The agent in the sandbox serves envd; the gateway authorizes each
//     request through the access service and forwards it over the agent
//     link.
//
// See docs/E2B.md for what is supported, endpoint by endpoint.
package e2b

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// Prefix is where the surface is served on the API's listener.
const Prefix = "/e2b"

// EnvdPort is the port the e2b SDK reaches envd at.
const EnvdPort = 49983

// Config configures the surface.
type Config struct {
	// Domain, when set, serves the surface by host as E2B's cloud does:
	// api.<Domain> is the REST API and <port>-<sandbox id>.<Domain> a
	// sandbox's port (envd at EnvdPort), for E2B_DOMAIN=<Domain> behind a
	// TLS proxy with a wildcard certificate. "" serves it under Prefix
	// only.
	Domain string
	// Store keeps the surface's records (E2B sandboxes' templates and
	// metadata) and finds the orgs and workspaces keys name.
	Store Store
}

// Door is what the surface shares with the API it is served beside: one
// rate limiter, one set of open streams that a revoked credential ends.
type Door interface {
	// Admit runs authn and spends the token the request draws: its
	// credential's, or, refused, its address's.
	Admit(w http.ResponseWriter, r *http.Request, authn func() (auth.Identity, error)) (auth.Identity, error)
	// TakeAddress spends a token of the client address's bucket.
	TakeAddress(w http.ResponseWriter, r *http.Request) error
	// Live ties ctx to id's credential in org: revoking it ends ctx.
	Live(ctx context.Context, id auth.Identity, org string) (context.Context, func())
	// Status is the HTTP status err answers, and its generic code.
	Status(err error) (int, string)
	// RequestID is the request's id, as the door logs it.
	RequestID(ctx context.Context) string
	// HoldStream holds a place among the exec streams of the runtime and
	// of the principal (the API's caps) until release; full, it is a
	// resource-exhausted error.
	HoldStream(ctx context.Context, runtimeID, principal string) (release func(), err error)
}

// Ports reaches a port of a sandbox, as the preview gateway does.
type Ports interface {
	// ServePort answers r as a request to port of the runtime named id.
	ServePort(w http.ResponseWriter, r *http.Request, id string, port int)
}

// Options wire a Gateway.
type Options struct {
	Config
	// Path reaches runtimes: resolve, authorize, wake, dial.
	Path     iam.Path
	IAM      *iam.Service
	Runtimes *runtime.Service
	Tenancy  *tenancy.Service
	Door     Door
	// MaxBody bounds an envd request's body (an upload); MaxJSON a REST
	// request's (JSON), which is decoded whole.
	MaxBody int64
	MaxJSON int64
	Logger  *slog.Logger
	// Ports serves a sandbox's ports other than envd's (the preview
	// gateway); nil answers them 400.
	Ports Ports
}

// Gateway serves the surface. It is safe for concurrent use.
type Gateway struct {
	o    Options
	rest http.Handler
	envd http.Handler
}

// New returns a Gateway.
func New(o Options) *Gateway {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{o: o}
	g.rest = g.newREST()
	g.envd = g.newEnvd()
	return g
}

// Serve answers r when it is the surface's; ok is false otherwise.
func (g *Gateway) Serve(w http.ResponseWriter, r *http.Request) (ok bool) {
	if h, ok := g.byHost(r); ok {
		h.ServeHTTP(w, r)
		return true
	}
	rest, found := strings.CutPrefix(r.URL.Path, Prefix)
	if !found || (rest != "" && rest[0] != '/') {
		return false
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = rest
	r2.URL.RawPath = ""
	if r.Header.Get("E2b-Sandbox-Id") != "" {
		g.envd.ServeHTTP(w, r2)
		return true
	}
	g.rest.ServeHTTP(w, r2)
	return true
}

// byHost is the handler for a request to one of the domain's hosts.
func (g *Gateway) byHost(r *http.Request) (http.Handler, bool) {
	if g.o.Domain == "" {
		return nil, false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	first, domain, found := strings.Cut(strings.ToLower(host), ".")
	if !found || domain != strings.ToLower(g.o.Domain) {
		return nil, false
	}
	if first == "api" {
		return g.rest, true
	}
	if _, _, ok := strings.Cut(first, "-"); ok {
		return g.envd, true
	}
	return nil, false
}
