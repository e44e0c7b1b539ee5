package e2b

import (
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// envd is the gateway to envd, the in-sandbox API, which the sandbox's
// agent serves on its link (internal/shim, envd*.go). A request names its
// sandbox and port by its E2b-Sandbox-Id and E2b-Sandbox-Port headers, or
// by host <port>-<sandbox id>.<Domain>; it carries the sandbox's envd
// access token as X-Access-Token. The gateway
//
//   - hands a request to another port to the preview gateway
//     (Options.Ports), whose rules hold there;
//   - lets through envd's own routes only (envdRoute): nothing else the
//     agent serves (paddock's agent services) is reachable;
//   - authorizes the token through the access service on every request
//     (its maker must still hold their credential and reach the
//     runtime), spends the maker's rate limit, and ends a stream when the
//     credential is revoked;
//   - forwards to a running sandbox only: a paused, archived or stopped
//     one answers 502 "The sandbox was not found", as E2B's proxy answers
//     for a sandbox that is not running, so that the SDK's isRunning()
//     says false and its calls fail as for a sandbox timed out. The SDK
//     resumes a paused sandbox explicitly (Sandbox.connect, the REST
//     API's /connect), so envd never wakes one, unlike paddock's own
//     doors;
//   - streams the agent's answer back as it comes (Connect server
//     streams and their keepalives), and ends the agent's call when the
//     client goes away.
func (g *Gateway) newEnvd() http.Handler { return http.HandlerFunc(g.serveEnvd) }

// Routing headers, as the SDK sends them.
const (
	headerSandboxID   = "E2b-Sandbox-Id"
	headerSandboxPort = "E2b-Sandbox-Port"
	headerAccessToken = "X-Access-Token"
)

// envdRouteRE is envd's Connect services' methods.
var envdRouteRE = regexp.MustCompile(`^/(process\.Process|filesystem\.Filesystem)/[A-Za-z]+$`)

// envdRoute reports whether method and path are one of envd's routes:
// GET /health, GET and POST /files, POST to a method of process.Process
// or filesystem.Filesystem.
func envdRoute(method, path string) bool {
	switch path {
	case "/health":
		return method == http.MethodGet
	case "/files":
		return method == http.MethodGet || method == http.MethodPost
	}
	return method == http.MethodPost && envdRouteRE.MatchString(path)
}

// isEnvdStream reports whether path is a server stream's, open for as
// long as a process runs or a directory is watched.
func isEnvdStream(path string) bool {
	switch path {
	case "/process.Process/Start", "/process.Process/Connect", "/filesystem.Filesystem/WatchDir":
		return true
	}
	return false
}

// isConnectPath reports whether path is a Connect method's, whose errors
// a Connect client reads in Connect's shape.
func isConnectPath(path string) bool {
	return strings.HasPrefix(path, "/process.Process/") || strings.HasPrefix(path, "/filesystem.Filesystem/")
}

// envdTarget is the sandbox and port r names: by host
// <port>-<sandbox id>.<Domain> when it is one, else by its headers.
func (g *Gateway) envdTarget(r *http.Request) (id string, port int, err error) {
	rawPort := r.Header.Get(headerSandboxPort)
	id = r.Header.Get(headerSandboxID)
	if first, ok := g.sandboxHost(r.Host); ok {
		rawPort, id, _ = strings.Cut(first, "-")
	} else if rawPort == "" {
		return "", 0, errdefs.InvalidArgument("missing_header", "missing header: %s", headerSandboxPort)
	}
	port, perr := strconv.Atoi(rawPort)
	switch {
	case perr != nil || port < 1 || port > 65535:
		return "", 0, errdefs.InvalidArgument("invalid_sandbox_port", "invalid sandbox port %q", rawPort)
	case !store.IsID(strings.ToLower(id)):
		return "", 0, errdefs.InvalidArgument("invalid_sandbox_id", "invalid sandbox ID: a sandbox's ID is its runtime's (a UUID)")
	}
	return strings.ToLower(id), port, nil
}

// sandboxHost is the first label of host when host is
// <port>-<sandbox id>.<Domain>.
func (g *Gateway) sandboxHost(host string) (string, bool) {
	if g.o.Domain == "" {
		return "", false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	first, domain, found := strings.Cut(strings.ToLower(host), ".")
	if !found || domain != strings.ToLower(g.o.Domain) || !strings.Contains(first, "-") {
		return "", false
	}
	return first, true
}

// serveEnvd answers one envd request.
func (g *Gateway) serveEnvd(w http.ResponseWriter, r *http.Request) {
	id, port, err := g.envdTarget(r)
	if err == nil && port != EnvdPort {
		if _, byHost := g.sandboxHost(r.Host); !byHost {
			// Under /e2b the answer would share the API's and the
			// console's origin: an app's there is a preview host's only.
			err = errdefs.InvalidArgument("port_not_served", "port %d: only envd (port %d) is served under %s; reach a sandbox's other ports at its host %d-<sandbox id>.<e2b domain> or its preview URL", port, EnvdPort, Prefix, port)
		} else {
			g.servePort(w, r, id, port)
			return
		}
	}
	if err == nil && (!envdRoute(r.Method, r.URL.Path) || r.URL.RawPath != "") {
		err = errdefs.NotFound("envd_route_not_found", "%s %s is not an envd route", r.Method, r.URL.Path)
	}
	if err == nil && g.o.MaxBody > 0 && r.ContentLength > g.o.MaxBody {
		err = errTooLarge(g.o.MaxBody)
	}
	if err != nil {
		g.envdFail(w, r, id, err)
		return
	}
	if g.o.MaxBody > 0 && r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, g.o.MaxBody)
	}
	rt, who, err := g.admitEnvd(w, r, id)
	if err == nil && rt.Status != store.RuntimeRunning {
		err = errSandboxGone(string(rt.Status))
	}
	if err != nil {
		g.envdFail(w, r, id, err)
		return
	}
	if r.URL.Path == "/health" {
		// The SDK's isRunning() polls it: answered here, from the
		// runtime's state, it is no activity, so polling does not keep
		// a sandbox from its timeout (E2B's envd answers the same 204).
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if isEnvdStream(r.URL.Path) {
		// A stream holds its place among the caller's and the runtime's
		// exec streams, as paddock's own do, for as long as it is open.
		release, err := g.o.Door.HoldStream(r.Context(), rt.ID, who.Principal())
		if err != nil {
			g.envdFail(w, r, id, err)
			return
		}
		defer release()
	}
	ctx, end := g.o.Door.Live(r.Context(), who, rt.OrgID)
	defer end()
	r = r.WithContext(ctx)
	// The agent is held, and the runtime counts as active, for as long as
	// the request lasts.
	agent, err := g.o.Path.Dial(ctx, rt)
	if err != nil {
		g.envdFail(w, r, id, reachFailed(err))
		return
	}
	g.envdProxy(agent, id, who).ServeHTTP(w, r)
}

// admitEnvd finds the sandbox id names and decides whether r may reach
// its envd: by r's envd access token, whose maker's credential spends the
// rate limit (Door.Admit); a request without one, or with a bad one,
// spends its address's. A sandbox that does not exist is gone to the
// holder of a token made for it (errSandboxGone), and for anyone else
// refused like one they may not reach, so nobody learns which sandboxes
// exist.
func (g *Gateway) admitEnvd(w http.ResponseWriter, r *http.Request, id string) (store.Runtime, auth.Identity, error) {
	ctx := r.Context()
	token := r.Header.Get(headerAccessToken)
	var rt store.Runtime
	gone := false
	who, err := g.o.Door.Admit(w, r, func() (auth.Identity, error) {
		switch {
		case token == "" && r.URL.Query().Has("signature"):
			return auth.Identity{}, errSignedURL
		case token == "":
			return auth.Identity{}, errNoToken
		}
		var err error
		rt, err = g.o.Path.Resolve(ctx, id)
		if errdefs.IsNotFound(err) {
			gone = true
			return g.o.IAM.EnvdTokenMaker(ctx, token, id)
		}
		if err != nil {
			return auth.Identity{}, err
		}
		return g.o.IAM.EnvdToken(ctx, token, rt)
	})
	if err == nil && gone {
		err = errSandboxGone("deleted")
	}
	return rt, who, err
}

var (
	errNoToken = errdefs.Unauthenticated("missing_access_token", "send the sandbox's envd access token (the envdAccessToken the API answered) as X-Access-Token").
			WithCause(&auth.Refusal{Reason: "no_credentials"})
	// errSignedURL: a signed URL's signature is a hash over the access
	// token, which paddock does not keep (it is sealed with a fresh
	// nonce each time it is made), so it cannot be checked.
	errSignedURL = errdefs.Unauthenticated("signed_url_not_supported", "signed file URLs are not supported: send the sandbox's envd access token as X-Access-Token instead").
			WithCause(&auth.Refusal{Reason: "signed_url"})
)

// goneError says the sandbox is not running (or no longer exists): E2B's
// proxy answers it 502 "The sandbox was not found".
type goneError struct{ why string }

func (e *goneError) Error() string { return "the sandbox is not running: " + e.why }

func errSandboxGone(why string) error { return &goneError{why} }

func errTooLarge(limit int64) error {
	return errdefs.InvalidArgument("body_too_large", "the request body is larger than %d bytes", limit)
}

// reachFailed is why the agent of a runtime seen running could not be
// dialed: it stopped meanwhile (gone), or it does not answer.
func reachFailed(err error) error {
	if errdefs.IsConflict(err) || errdefs.IsNotFound(err) {
		return errSandboxGone("changed state")
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &unreachableError{err}
}

// unreachableError: the sandbox is running but its agent does not
// answer; E2B's proxy answers a closed port 502 too.
type unreachableError struct{ cause error }

func (e *unreachableError) Error() string {
	return "the sandbox agent is unreachable: " + e.cause.Error()
}
func (e *unreachableError) Unwrap() error { return e.cause }

// servePort answers a request to a sandbox's port other than envd's as a
// preview of it (Options.Ports), without E2B's routing headers and the
// envd access token, which are no app's business.
func (g *Gateway) servePort(w http.ResponseWriter, r *http.Request, id string, port int) {
	if g.o.Ports == nil {
		g.envdFail(w, r, id, errdefs.InvalidArgument("port_not_served", "port %d: only envd (port %d) is served here; reach a sandbox's other ports through paddock's preview URLs", port, EnvdPort))
		return
	}
	r = r.Clone(r.Context())
	for name := range r.Header {
		if strings.HasPrefix(name, "E2b-") || name == headerAccessToken || name == "X-Api-Key" {
			r.Header.Del(name)
		}
	}
	g.o.Ports.ServePort(w, r, id, port)
}
