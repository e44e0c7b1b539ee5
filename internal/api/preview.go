package api

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Ports and preview URLs: a server listening on port P inside a runtime's
// sandbox is reachable through the control plane at
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
// cookie a ?token= visit sets).

// Preview configures preview URLs.
type Preview struct {
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

const (
	previewCookie = "paddock_preview"
	// previewCookiePartitioned is the same token in a cookie for
	// third-party contexts (previewCookies).
	previewCookiePartitioned = "paddock_preview_p"
	previewHeader            = "X-Paddock-Preview-Token"
)

// previewHostRE is the first label of a preview host: P-<short id>.
var previewHostRE = regexp.MustCompile(`^([0-9]{1,5})-([0-9a-f]{12})$`)

// portsPathRE is a path URL: the runtime's path, ports, P, then the rest.
var portsPathRE = regexp.MustCompile(`^/api/v1/org/([^/]+)/ws/([^/]+)/runtimes/([^/]+)/ports/([0-9]{1,5})(/.*)?$`)

func (a *API) previewDomain() string {
	if a.preview.Domain == "" {
		return "localhost"
	}
	return strings.ToLower(a.preview.Domain)
}

// ShortID is how a preview host names a runtime (iam.ShortID).
func ShortID(runtimeID string) string { return iam.ShortID(runtimeID) }

// previewHost parses a request's Host as a preview host.
func (a *API) previewHost(host string) (port int, short string, ok bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	first, rest, found := strings.Cut(strings.ToLower(host), ".")
	if !found || rest != a.previewDomain() {
		return 0, "", false
	}
	m := previewHostRE.FindStringSubmatch(first)
	if m == nil {
		return 0, "", false
	}
	port, err := strconv.Atoi(m[1])
	if err != nil || port < 1 || port > 65535 {
		return 0, "", false
	}
	return port, m[2], true
}

// previewURL is the preview URL of port on rt.
func (a *API) previewURL(rt store.Runtime, port int) string {
	u := fmt.Sprintf("%s://%d-%s.%s", a.preview.Scheme, port, ShortID(rt.ID), a.previewDomain())
	if a.preview.Port != "" {
		u += ":" + a.preview.Port
	}
	return u + "/"
}

// isPortsPath is a cheap first test for a path URL, so that API requests
// skip the expression.
func isPortsPath(p string) bool { return strings.Contains(p, "/ports/") }

// IsPreview reports whether r goes to a sandbox's port (a preview host or
// a path URL) rather than to the API.
func (a *API) IsPreview(r *http.Request) bool {
	_, _, host := a.previewHost(r.Host)
	return host || isPortsPath(r.URL.Path) && portsPathRE.MatchString(r.URL.Path)
}

// servePreview answers a request to a preview host or a path URL; ok is
// false when r is neither.
func (a *API) servePreview(w http.ResponseWriter, r *http.Request) bool {
	if port, short, ok := a.previewHost(r.Host); ok {
		a.proxyPort(w, r, port, func() (store.Runtime, error) { return a.path().Resolve(r.Context(), short) }, "")
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
	a.proxyPort(w, r, port, func() (store.Runtime, error) { return a.path().ResolveIn(r.Context(), m[1], m[2], m[3]) }, prefix)
	return true
}

// path is the one way to a runtime's agent every door takes: resolve,
// authorize, wake, dial.
func (a *API) path() iam.Path { return iam.Path{Access: a.iam, Agents: a.runtimes} }

// proxyPort checks who may reach port of the runtime find names, wakes it,
// waits for the port and proxies the request to it. prefix is the path
// URL's part before the app's own path ("" on a preview host).
func (a *API) proxyPort(w http.ResponseWriter, r *http.Request, port int, find func() (store.Runtime, error), prefix string) {
	ctx := r.Context()
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, a.limits.UploadBodyBytes)
	}
	if port < 1 || port > 65535 {
		a.previewError(w, r, errdefs.InvalidArgument("invalid_port", "port %d is not 1 to 65535", port))
		return
	}
	anon := anonymous(r, prefix)
	if anon {
		// Nothing to verify: the address pays before the store is asked
		// anything, so a flood answered 429 costs no query.
		if err := a.takeAddress(w, r); err != nil {
			a.previewError(w, r, err)
			return
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
		a.previewError(w, r, err)
		return
	}
	grant, err := a.previewAccess(w, r, rt, port, prefix, anon)
	if err != nil {
		a.previewError(w, r, err)
		return
	}
	if grant.tokenInQuery && grant.cookieSet && redirectStrippingToken(w, r) {
		return
	}
	if grant.cred != "" {
		// Revoking the credential (or the token's maker) ends the stream
		// at once: a WebSocket, server-sent events.
		var end func()
		ctx, end = a.live.open(ctx, grant.id, rt.OrgID)
		defer end()
		r = r.WithContext(ctx)
	}
	wasRunning := rt.Status == store.RuntimeRunning
	// Waking is bounded; the port then gets its own bounded wait.
	if err := a.path().Wake(ctx, rt, a.previewWait()+time.Minute); err != nil {
		a.previewError(w, r, err)
		return
	}
	// The agent is held, and the runtime counts as active, for as long as
	// the request (a WebSocket included) lasts.
	agent, err := a.path().Dial(ctx, rt)
	if err != nil {
		a.previewError(w, r, iam.WakeFailed(err))
		return
	}
	if !wasRunning {
		// Just woken: its server may need a moment to answer again.
		if err := a.awaitPort(ctx, agent, port); err != nil {
			a.previewError(w, r, err)
			return
		}
	}
	a.portProxy(r, agent, port, prefix).ServeHTTP(w, r)
}

func errNeedsCredentials(port int) error {
	return errdefs.Unauthenticated("preview_needs_credentials", "port %d is private: send an API key, or open the link with a preview token (?token=)", port)
}

// errPreviewNotFound answers a preview of a runtime that does not exist
// and of one the caller may not see alike, naming neither.
var errPreviewNotFound = iam.ErrRuntimeNotFound

func (a *API) previewWait() time.Duration {
	if a.preview.Wait > 0 {
		return a.preview.Wait
	}
	return 30 * time.Second
}

// awaitPort waits, bounded, until something listens on port of a
// runtime just woken.
func (a *API) awaitPort(ctx context.Context, agent *agentconn.Client, port int) error {
	deadline := time.Now().Add(a.previewWait())
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

// previewGrant is how a request was let through to a port.
type previewGrant struct {
	// cred is the credential it acts for (the caller's, or the maker of
	// its preview token), "" for a public port; id is its identity.
	cred string
	id   auth.Identity
	// token is the preview token that let it through, if one did.
	token string
	// tokenInQuery: ?token= held the preview token; cookieSet: a cookie
	// now carries it.
	tokenInQuery, cookieSet bool
}

// presentedTokens are where r may carry a preview token, in the order
// previewToken tries them: the header, ?token= (index 1), and on a
// preview host its cookies ("" where there is none).
func presentedTokens(r *http.Request, prefix string) []string {
	out := []string{r.Header.Get(previewHeader), r.URL.Query().Get("token")}
	if prefix == "" {
		// Cookies only on preview hosts: a path URL shares the API's
		// origin with every other runtime's.
		for _, c := range append(r.CookiesNamed(previewCookie), r.CookiesNamed(previewCookiePartitioned)...) {
			out = append(out, c.Value)
		}
	}
	return out
}

// anonymous reports whether r presents no credential at all: no
// Authorization header and no preview token.
func anonymous(r *http.Request, prefix string) bool {
	return r.Header.Get("Authorization") == "" && !slices.ContainsFunc(presentedTokens(r, prefix), func(t string) bool { return t != "" })
}

// previewAccess decides whether r may reach port of rt: a public port, a
// preview token (header, ?token=, or, on a preview host, its cookie), or
// the credentials of a member who sees rt's workspace. rt is zero for a
// runtime that does not exist, and every check then fails exactly as for
// one the caller may not see. The request spends a token of its preview
// token's own bucket (takeToken), of the credential it acts for, or of
// the client address when it has none or its credential is refused
// (admit); an anonymous request has paid the address already.
func (a *API) previewAccess(w http.ResponseWriter, r *http.Request, rt store.Runtime, port int, prefix string, anon bool) (previewGrant, error) {
	public := rt.ID != "" && slices.Contains(rt.Config.PublicPorts, port)
	switch {
	case anon && public:
		return previewGrant{}, nil
	case anon:
		return previewGrant{}, errNeedsCredentials(port)
	case public:
		return previewGrant{}, a.takeAddress(w, r)
	}
	g, ok, tokenErr := a.previewToken(w, r, rt, port, prefix)
	if ok {
		return g, a.takeToken(w, g.token)
	}
	id, err := a.admit(w, r, func() (auth.Identity, error) {
		switch {
		case r.Header.Get("Authorization") != "":
			return a.authenticate(w, r)
		case tokenErr != nil:
			return auth.Identity{}, tokenErr
		}
		return auth.Identity{}, errNeedsCredentials(port)
	})
	if err != nil {
		return previewGrant{}, err
	}
	if err := a.path().Authorize(r.Context(), id, iam.Member, rt); err != nil {
		return previewGrant{}, err
	}
	return previewGrant{cred: id.Credential(), id: id}, nil
}

// previewToken looks for a preview token of rt and port in r. A token
// lives no longer than its maker's access: a revoked key, an ended
// session or a removed member takes the token with it. ok says one let r
// through; otherwise err says why the last one presented did not.
func (a *API) previewToken(w http.ResponseWriter, r *http.Request, rt store.Runtime, port int, prefix string) (g previewGrant, ok bool, err error) {
	if !a.iam.PreviewTokens() {
		return previewGrant{}, false, nil
	}
	for i, tok := range presentedTokens(r, prefix) {
		if tok == "" {
			continue
		}
		// No token names a runtime that does not exist (rt.ID "").
		maker, cred, terr := a.iam.PreviewToken(r.Context(), tok, rt, port)
		if terr != nil {
			err = terr
			continue
		}
		g := previewGrant{cred: cred, id: maker, token: tok, tokenInQuery: i == 1}
		if i == 1 && prefix == "" {
			// A first visit: the cookie keeps a tab or an iframe going.
			cs := a.previewCookies(r, tok)
			for _, c := range cs {
				http.SetCookie(w, c)
			}
			g.cookieSet = len(cs) > 0
		}
		return g, true, nil
	}
	return previewGrant{}, false, err
}

// previewCookies are the cookies a ?token= visit to a preview host sets.
// A SameSite=Lax one serves tabs and same-site pages. An iframe in
// another site's page is a third-party context, where browsers send only
// partitioned cookies: for that navigation alone (Sec-Fetch-Dest: iframe,
// Sec-Fetch-Site: cross-site), and where a secure cookie can be kept
// (HTTPS, or a *.localhost host, which browsers treat as secure), a
// SameSite=None, Partitioned (CHIPS) cookie is set too. Both are Secure
// over HTTPS. On plain HTTP on a real domain a cross-site iframe gets no
// cookie; a deployment that wants them serves HTTPS.
func (a *API) previewCookies(r *http.Request, tok string) []*http.Cookie {
	secure := r.TLS != nil || a.preview.Scheme == "https"
	cs := []*http.Cookie{{Name: previewCookie, Value: tok, Path: "/", HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	thirdParty := r.Header.Get("Sec-Fetch-Dest") == "iframe" && r.Header.Get("Sec-Fetch-Site") == "cross-site"
	if thirdParty && (secure || strings.HasSuffix(strings.ToLower(host), ".localhost")) {
		cs = append(cs, &http.Cookie{Name: previewCookiePartitioned, Value: tok, Path: "/", HttpOnly: true,
			Secure: true, SameSite: http.SameSiteNoneMode, Partitioned: true})
	}
	return cs
}

// redirectStrippingToken sends a browser's GET that carried ?token= (now
// in a cookie) to the same URL without it, so the token stays out of
// history and Referer headers.
func redirectStrippingToken(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	if r.Method != http.MethodGet || !strings.Contains(r.Header.Get("Accept"), "text/html") {
		return false
	}
	q.Del("token")
	u := *r.URL
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
	return true
}

// previewError answers a preview request that did not reach its port: a
// small HTML page that says why for a browser, the one JSON error body
// for anything else.
func (a *API) previewError(w http.ResponseWriter, r *http.Request, err error) {
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		a.fail(r.Context(), w, err)
		return
	}
	status := statusOf(err)
	code, msg := genericCodes[status], http.StatusText(status)
	if pe, ok := errdefs.Public(err); ok {
		code, msg = pe.Code, pe.Message
	} else if status == http.StatusInternalServerError {
		code, msg = "internal", "internal error; the server logged the details"
		a.logger.ErrorContext(r.Context(), "preview failed", "err", err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>paddock: %[1]s</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 4em auto">
<h1>%[2]d %[3]s</h1><p>%[4]s</p><p><code>%[1]s</code> · request %[5]s</p></body></html>
`, html.EscapeString(code), status, html.EscapeString(http.StatusText(status)), html.EscapeString(msg), html.EscapeString(requestIDFrom(r.Context())))
}

// portsOf lists rt's ports: those listening in its sandbox (when it has a
// running one) and those marked public.
func (a *API) portsOf(ctx context.Context, rt store.Runtime, prefix string) ([]client.Port, error) {
	byPort := map[int]*client.Port{}
	if rt.Status == store.RuntimeRunning {
		agent, _, err := a.runtimes.AgentOf(ctx, rt)
		if err != nil {
			return nil, err
		}
		ls, err := agent.ListPorts(ctx)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			if p, seen := byPort[l.Port]; seen {
				p.Address += ", " + l.Address
				continue
			}
			byPort[l.Port] = &client.Port{Port: l.Port, Listening: true, Address: l.Address, PID: l.PID, Command: l.Command}
		}
	}
	for _, p := range rt.Config.PublicPorts {
		if byPort[p] == nil {
			byPort[p] = &client.Port{Port: p}
		}
		byPort[p].Public = true
	}
	out := make([]client.Port, 0, len(byPort))
	for _, p := range byPort {
		p.URL = a.previewURL(rt, p.Port)
		p.PathURL = prefix + "/ports/" + strconv.Itoa(p.Port) + "/"
		out = append(out, *p)
	}
	slices.SortFunc(out, func(x, y client.Port) int { return x.Port - y.Port })
	return out, nil
}

// portParam reads {port}.
func portParam(r *http.Request) (int, error) {
	p, err := strconv.Atoi(r.PathValue("port"))
	if err != nil || p < 1 || p > 65535 {
		return 0, errdefs.InvalidArgument("invalid_port", "%q is not a port (1 to 65535)", r.PathValue("port"))
	}
	return p, nil
}

// rtPathOf is the path URL prefix of rt (its runtime path).
func rtPathOf(r *http.Request, rt store.Runtime) string {
	return "/api/v1/org/" + r.PathValue("org") + "/ws/" + r.PathValue("workspace") + "/runtimes/" + rt.ID
}

func (a *API) listPorts(w http.ResponseWriter, r *http.Request) error {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	ports, err := a.portsOf(r.Context(), rt, rtPathOf(r, rt))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, client.List[client.Port]{Items: ports})
	return nil
}

// setPort marks a port public or private.
func (a *API) setPort(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	port, err := portParam(r)
	if err != nil {
		return err
	}
	var req client.SetPortRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	id := rt.ID
	for attempt := 0; ; attempt++ {
		ports := slices.DeleteFunc(slices.Clone(rt.Config.PublicPorts), func(p int) bool { return p == port })
		if req.Public {
			ports = append(ports, port)
			slices.Sort(ports)
		}
		rt.Config.PublicPorts = ports
		if len(ports) == 0 {
			rt.Config.PublicPorts = nil
		}
		rt, err = a.store.UpdateRuntime(ctx, rt)
		if err == nil || !errdefs.IsConflict(err) || attempt == 5 {
			break
		}
		// Changed meanwhile (a conflict returns no record): read it again.
		if rt, err = a.store.GetRuntime(ctx, id); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	out := client.Port{Port: port, Public: req.Public, URL: a.previewURL(rt, port), PathURL: rtPathOf(r, rt) + "/ports/" + strconv.Itoa(port) + "/"}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// createPreviewToken signs a preview token for one port.
func (a *API) createPreviewToken(w http.ResponseWriter, r *http.Request) error {
	port, err := portParam(r)
	if err != nil {
		return err
	}
	var req client.PreviewTokenRequest
	if err := decodeJSON(w, r, &req, true); err != nil {
		return err
	}
	ttl, err := a.iam.PreviewTTL(req.TTL)
	if err != nil {
		return err
	}
	rt, err := a.runtimeOf(r)
	if err != nil {
		return err
	}
	tok, exp, err := a.iam.IssuePreviewToken(identity(r), rt, port, ttl)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, client.PreviewToken{Token: tok, URL: a.previewURL(rt, port) + "?token=" + tok, ExpiresAt: exp})
	return nil
}
