// Package preview is the preview gateway: the door through which a
// browser reaches a server listening on port P inside a runtime's
// sandbox, at
//
//   - P-<runtime short id>.<preview domain> (the preview URL: its own
//     origin, so an app's absolute links work), and
//   - /api/v1/org/{org}/ws/{ws}/runtimes/{id}/ports/{P}/… (the path URL).
//
// Bytes reach the port through the agent (a port-forward stream), so the
// sandbox needs no network. A request to a paused or archived runtime
// wakes it and waits, bounded, for the port to answer; each request, and
// a WebSocket for as long as it is open, is activity.
//
// A port is private unless the runtime marks it public: a request then
// needs an API key or session of a member of the runtime's workspace, or
// a preview token for that runtime and port (header, ?token=, or the
// cookie a ?token= visit sets). Who may reach what is the access
// service's to say; the gateway takes the one path every door takes
// (iam.Path: resolve, authorize, wake, dial) and adds only HTTP: tokens
// in cookies, the proxy, an error page a browser can show.
package preview

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Config configures preview URLs.
type Config struct {
	// Domain is the preview domain: a port's host is
	// P-<short id>.<Domain>. "" means "localhost", which browsers resolve
	// to loopback without any DNS.
	Domain string
	// Scheme and Port are how users reach this server ("http", and the
	// listen port), for the URLs the API hands out.
	Scheme string
	Port   string
	// Wait bounds how long a request to a runtime being woken waits for
	// its port to answer (0: 30 s).
	Wait time.Duration
}

// Door is what the gateway shares with the door it is served behind (the
// HTTP API): one rate limiter, one error body, one set of open streams
// that a revoked credential ends.
type Door interface {
	// Authenticate verifies r's Authorization header.
	Authenticate(w http.ResponseWriter, r *http.Request) (auth.Identity, error)
	// Admit runs authn and spends the token the request draws: its
	// credential's, or, refused, its address's.
	Admit(w http.ResponseWriter, r *http.Request, authn func() (auth.Identity, error)) (auth.Identity, error)
	// TakeAddress spends a token of the client address's bucket;
	// TakeToken one of a preview token's.
	TakeAddress(w http.ResponseWriter, r *http.Request) error
	TakeToken(w http.ResponseWriter, token string) error
	// Live ties ctx to id's credential in org: revoking it ends ctx.
	Live(ctx context.Context, id auth.Identity, org string) (context.Context, func())
	// Fail answers err with the one JSON error body.
	Fail(w http.ResponseWriter, r *http.Request, err error)
	// Status is the HTTP status err answers, and its generic code.
	Status(err error) (int, string)
	// RequestID is the request's id, as the door logs it.
	RequestID(ctx context.Context) string
}

// Options wire a Gateway.
type Options struct {
	Config
	// Path reaches runtimes: resolve, authorize, wake, dial.
	Path iam.Path
	Door Door
	// MaxBody bounds a request's body.
	MaxBody int64
	Logger  *slog.Logger
	// Publish, when set, makes port of rt public when rt declares it
	// public once listening and its agent sees it listen
	// (runtime.Service.PublishIfListening), and reports whether it is
	// public now.
	Publish func(ctx context.Context, rt store.Runtime, port int) (store.Runtime, bool, error)
}

// Gateway serves previews. It is safe for concurrent use.
type Gateway struct {
	cfg     Config
	path    iam.Path
	door    Door
	maxBody int64
	logger  *slog.Logger
	publish func(ctx context.Context, rt store.Runtime, port int) (store.Runtime, bool, error)
	// transports are the proxy's (proxy.go).
	transports portTransports
}

// New returns a Gateway.
func New(o Options) *Gateway {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Gateway{cfg: o.Config, path: o.Path, door: o.Door, maxBody: o.MaxBody, logger: o.Logger, publish: o.Publish}
}

const (
	cookieName = "paddock_preview"
	// cookiePartitioned is the same token in a cookie for third-party
	// contexts (cookies).
	cookiePartitioned = "paddock_preview_p"
	tokenHeader       = "X-Paddock-Preview-Token"
)

// hostRE is the first label of a preview host: P-<short id>.
var hostRE = regexp.MustCompile(`^([0-9]{1,5})-([0-9a-f]{12})$`)

// portsPathRE is a path URL: the runtime's path, ports, P, then the rest.
var portsPathRE = regexp.MustCompile(`^/api/v1/org/([^/]+)/ws/([^/]+)/runtimes/([^/]+)/ports/([0-9]{1,5})(/.*)?$`)

func (g *Gateway) domain() string { return g.cfg.domain() }

// host parses a request's Host as a preview host.
func (g *Gateway) host(host string) (port int, short string, ok bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	first, rest, found := strings.Cut(strings.ToLower(host), ".")
	if !found || rest != g.domain() {
		return 0, "", false
	}
	m := hostRE.FindStringSubmatch(first)
	if m == nil {
		return 0, "", false
	}
	port, err := strconv.Atoi(m[1])
	if err != nil || port < 1 || port > 65535 {
		return 0, "", false
	}
	return port, m[2], true
}

// URL is the preview URL of port on rt.
func (g *Gateway) URL(rt store.Runtime, port int) string { return g.cfg.URL(rt.ID, port) }

// isPortsPath is a cheap first test for a path URL, so that API requests
// skip the expression.
func isPortsPath(p string) bool { return strings.Contains(p, "/ports/") }

// Is reports whether r goes to a sandbox's port (a preview host or a path
// URL) rather than to the API.
func (g *Gateway) Is(r *http.Request) bool {
	_, _, host := g.host(r.Host)
	return host || isPortsPath(r.URL.Path) && portsPathRE.MatchString(r.URL.Path)
}

// Serve answers a request to a preview host or a path URL; ok is false
// when r is neither.
func (g *Gateway) Serve(w http.ResponseWriter, r *http.Request) (ok bool) {
	if port, short, ok := g.host(r.Host); ok {
		g.proxy(w, r, port, func() (store.Runtime, error) { return g.path.Resolve(r.Context(), short) }, "")
		return true
	}
	if !isPortsPath(r.URL.Path) {
		return false
	}
	m := portsPathRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return false
	}
	port, _ := strconv.Atoi(m[4])
	prefix := strings.TrimSuffix(r.URL.Path, m[5])
	g.proxy(w, r, port, func() (store.Runtime, error) { return g.path.ResolveIn(r.Context(), m[1], m[2], m[3]) }, prefix)
	return true
}

// proxy checks who may reach port of the runtime find names, wakes it,
// waits for the port and proxies the request to it. prefix is the path
// URL's part before the app's own path ("" on a preview host).
func (g *Gateway) proxy(w http.ResponseWriter, r *http.Request, port int, find func() (store.Runtime, error), prefix string) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, g.maxBody)
	}
	rt, grant, err := g.admit(w, r, port, find, prefix)
	if err != nil {
		g.fail(w, r, err)
		return
	}
	if grant.tokenInQuery && grant.cookieSet && redirectStrippingToken(w, r) {
		return
	}
	ctx := r.Context()
	if grant.cred != "" {
		// Revoking the credential (or the token's maker) ends the stream
		// at once: a WebSocket, server-sent events.
		var end func()
		ctx, end = g.door.Live(ctx, grant.id, rt.OrgID)
		defer end()
		r = r.WithContext(ctx)
	}
	agent, err := g.reach(ctx, rt, port)
	if err != nil {
		g.fail(w, r, err)
		return
	}
	g.portProxy(r, agent, port, prefix).ServeHTTP(w, r)
}

// admit finds the runtime and decides whether r may reach its port.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request, port int, find func() (store.Runtime, error), prefix string) (store.Runtime, grant, error) {
	if port < 1 || port > 65535 {
		return store.Runtime{}, grant{}, errdefs.InvalidArgument("invalid_port", "port %d is not 1 to 65535", port)
	}
	anon := anonymous(r, prefix)
	if anon {
		// Nothing to verify: the address pays before the store is asked
		// anything, so a flood answered 429 costs no query.
		if err := g.door.TakeAddress(w, r); err != nil {
			return store.Runtime{}, grant{}, err
		}
	}
	rt, err := find()
	if errdefs.IsNotFound(err) {
		// A runtime that does not exist goes through the same checks as
		// one the caller may not see, with no id and no public port, and
		// ends in the same answer: nobody learns which runtimes exist.
		rt, err = store.Runtime{}, nil
	}
	if err != nil {
		return rt, grant{}, err
	}
	gr, err := g.access(w, r, rt, port, prefix, anon)
	return rt, gr, err
}

// reach wakes rt, bounded, and dials its agent; the agent is held, and
// the runtime counts as active, for as long as the request (a WebSocket
// included) lasts. A runtime just woken gets a bounded wait for its port.
func (g *Gateway) reach(ctx context.Context, rt store.Runtime, port int) (*agentconn.Client, error) {
	wasRunning := rt.Status == store.RuntimeRunning
	if err := g.path.Wake(ctx, rt, g.wait()+time.Minute); err != nil {
		return nil, err
	}
	agent, err := g.path.Dial(ctx, rt)
	if err != nil {
		return nil, iam.WakeFailed(err)
	}
	if !wasRunning {
		// Just woken: its server may need a moment to answer again.
		if err := g.awaitPort(ctx, agent, port); err != nil {
			return nil, err
		}
	}
	return agent, nil
}

func errNeedsCredentials(port int) error {
	return errdefs.Unauthenticated("preview_needs_credentials", "port %d is private: send an API key, or open the link with a preview token (?token=)", port)
}

func (g *Gateway) wait() time.Duration {
	if g.cfg.Wait > 0 {
		return g.cfg.Wait
	}
	return 30 * time.Second
}

// awaitPort waits, bounded, until something listens on port of a
// runtime just woken.
func (g *Gateway) awaitPort(ctx context.Context, agent *agentconn.Client, port int) error {
	deadline := time.Now().Add(g.wait())
	for {
		c, err := agent.DialPort(ctx, port)
		if err == nil {
			c.Close()
			return nil
		}
		pe, public := errdefs.Public(err)
		if !public || pe.Code != "port_not_listening" {
			return err
		}
		if time.Now().After(deadline) {
			return errNotListening(port, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func errNotListening(port int, cause error) error {
	return errdefs.Unavailable("port_not_listening", "nothing is listening on port %d in the sandbox", port).WithCause(cause)
}

// ServePort answers r, which reached this server on another door's host
// (the E2B-compatible surface's <port>-<sandbox id>.<domain>), as a
// request to port of the runtime named id on a preview host: the same
// access rules (a public port, a preview token, a member's credentials),
// wake and proxy.
func (g *Gateway) ServePort(w http.ResponseWriter, r *http.Request, id string, port int) {
	g.proxy(w, r, port, func() (store.Runtime, error) { return g.path.Resolve(r.Context(), id) }, "")
}

// ServeIn answers r, a request under prefix to port of runtime id in
// workspace ws of org (names), as a path URL there: the same access
// rules, wake and proxy. An installation in instance mode serves its
// runtime's ports so, under its own prefix.
func (g *Gateway) ServeIn(w http.ResponseWriter, r *http.Request, org, ws, id string, port int, prefix string) {
	g.proxy(w, r, port, func() (store.Runtime, error) { return g.path.ResolveIn(r.Context(), org, ws, id) }, prefix)
}
