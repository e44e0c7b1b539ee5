package preview

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// portProxy is the reverse proxy from r to port through agent. paddock's
// credentials stay behind; the app's answers, interim and final, pass
// appHeaderFilter.
func (g *Gateway) portProxy(r *http.Request, agent *agentconn.Client, port int, prefix string) http.Handler {
	filter := appHeaderFilter(prefix)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			if prefix != "" {
				// The app's path as the client escaped it (%2F stays).
				rest := strings.TrimPrefix(pr.In.URL.EscapedPath(), prefix)
				if rest == "" {
					rest = "/"
				}
				if u, err := url.Parse(rest); err == nil {
					pr.Out.URL.Path, pr.Out.URL.RawPath = u.Path, u.RawPath
				}
			}
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			// paddock's own credentials stop here.
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del(tokenHeader)
			// A paddock key in E2B's header (the E2B surface takes it
			// there); the app's own X-API-KEY is left alone.
			if strings.HasPrefix(pr.Out.Header.Get("X-Api-Key"), auth.KeyPrefix) {
				pr.Out.Header.Del("X-Api-Key")
			}
			if prefix != "" {
				// A path URL takes no cookies: those of the API's
				// origin are nobody's in particular.
				pr.Out.Header.Del("Cookie")
			} else {
				removeCookie(pr.Out, ownCookies...)
			}
			if q := pr.Out.URL.Query(); strings.HasPrefix(q.Get("token"), auth.SessionPrefix) {
				q.Del("token")
				pr.Out.URL.RawQuery = q.Encode()
			}
		},
		// HTTP/1.1 to the app, which every server speaks; gRPC, which
		// needs HTTP/2, goes as HTTP/2 without TLS.
		Transport: g.transports.get(agent, port, r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")),
		// Server-sent events and other streams reach the client as they
		// are written.
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			filter(resp.Header)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return
			}
			if pe, ok := errdefs.Public(err); ok && pe.Code == "port_not_listening" {
				g.fail(w, r, errNotListening(port, err))
				return
			}
			g.fail(w, r, errdefs.Unavailable("port_failed", "port %d did not answer: %v", port, err))
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rp.ServeHTTP(&informational{ResponseWriter: w, filter: filter}, r)
	})
}

// fail answers a preview request that did not reach its port: a small
// HTML page that says why for a browser, the door's one JSON error body
// for anything else.
func (g *Gateway) fail(w http.ResponseWriter, r *http.Request, err error) {
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		g.door.Fail(w, r, err)
		return
	}
	status, code := g.door.Status(err)
	msg := http.StatusText(status)
	if pe, ok := errdefs.Public(err); ok {
		code, msg = pe.Code, pe.Message
	} else if status == http.StatusInternalServerError {
		code, msg = "internal", "internal error; the server logged the details"
		g.logger.ErrorContext(r.Context(), "preview failed", "err", err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>paddock: %[1]s</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 4em auto">
<h1>%[2]d %[3]s</h1><p>%[4]s</p><p><code>%[1]s</code> · request %[5]s</p></body></html>
`, html.EscapeString(code), status, html.EscapeString(http.StatusText(status)), html.EscapeString(msg), html.EscapeString(g.door.RequestID(r.Context())))
}

// ownCookies are paddock's cookies, which an app on a preview host is
// never sent and may not set: the gateway's, and the console's under
// both its names (plain over http, __Host- where it is Secure).
var ownCookies = []string{cookieName, cookiePartitioned, auth.ConsoleCookie, "__Host-" + auth.ConsoleCookie}

// appHeaderFilter is what the app's answers go through, interim (1xx)
// and final alike. A path URL shares the API's origin: it sets no cookie
// there, and its pages run in a unique origin of their own, so they
// cannot use the API with the browser's credentials for it. On a
// preview host the app sets no cookie of paddock's.
func appHeaderFilter(prefix string) func(http.Header) {
	if prefix != "" {
		return func(h http.Header) {
			h.Del("Set-Cookie")
			h.Set("Content-Security-Policy", "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads")
		}
	}
	return func(h http.Header) { dropSetCookies(h, ownCookies...) }
}

// informational passes the app's interim answers (103 Early Hints and
// the like, which httputil.ReverseProxy writes as they come, without
// ModifyResponse) through filter. Unwrap keeps flushing and hijacking
// (WebSockets) working through it.
type informational struct {
	http.ResponseWriter
	filter func(http.Header)
}

func (w *informational) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		w.filter(w.Header())
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *informational) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// dropSetCookies removes the Set-Cookie lines that would set a cookie
// named one of names, read as browsers read them (setCookieName) and
// compared regardless of case (browsers tell case apart; paddock's names
// are kept from the app in every spelling).
func dropSetCookies(h http.Header, names ...string) {
	lines := h.Values("Set-Cookie")
	h.Del("Set-Cookie")
	for _, l := range lines {
		name := setCookieName(l)
		if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, name) }) {
			h.Add("Set-Cookie", l)
		}
	}
}

// setCookieName is the name a browser gives the cookie of a Set-Cookie
// line (RFC 6265, section 5.2; RFC 6265bis): the line ends at a control
// character (CR, LF, NUL); the pair before the first ';' splits at its
// first '='; the name is trimmed of spaces and tabs. A pair without '='
// is a nameless cookie that the browser sends back as its value alone,
// which a server reads as a cookie of that name: its value stands for
// the name here. So does the value of a pair whose name is empty
// ("=paddock_preview=x"), which the browser sends back as
// "paddock_preview=x": the name is then the value's part before its
// first '='.
func setCookieName(line string) string {
	if i := strings.IndexAny(line, "\r\n\x00"); i >= 0 {
		line = line[:i]
	}
	pair, _, _ := strings.Cut(line, ";")
	name, value, found := strings.Cut(pair, "=")
	if !found {
		return strings.Trim(pair, " \t")
	}
	if name = strings.Trim(name, " \t"); name != "" {
		return name
	}
	name, _, _ = strings.Cut(strings.Trim(value, " \t"), "=")
	return strings.Trim(name, " \t")
}

// removeCookie drops cookies from a request's Cookie headers.
func removeCookie(r *http.Request, names ...string) {
	cs := r.Cookies()
	r.Header.Del("Cookie")
	for _, c := range cs {
		if !slices.Contains(names, c.Name) {
			r.AddCookie(c)
		}
	}
}

// portTransports keeps one HTTP transport per agent and port, so that
// requests to a port reuse kept-alive connections (each one a forward
// stream over the agent link) instead of opening one each.
type portTransports struct {
	mu sync.Mutex
	m  map[portKey]*http.Transport
}

type portKey struct {
	agent *agentconn.Client
	port  int
	h2    bool
}

// maxPortTransports bounds the transports kept; past it the oldest are
// dropped (a sandbox gone leaves its agent's behind).
const maxPortTransports = 256

// get returns the transport for port through agent: HTTP/1.1, or with h2
// HTTP/2 without TLS (prior knowledge), which gRPC servers need.
func (p *portTransports) get(agent *agentconn.Client, port int, h2 bool) *http.Transport {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := portKey{agent, port, h2}
	if t := p.m[k]; t != nil {
		return t
	}
	if p.m == nil {
		p.m = map[portKey]*http.Transport{}
	}
	if len(p.m) >= maxPortTransports {
		for k, t := range p.m {
			t.CloseIdleConnections()
			delete(p.m, k)
			if len(p.m) < maxPortTransports/2 {
				break
			}
		}
	}
	t := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return agent.DialPort(ctx, port)
		},
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
	if h2 {
		var protos http.Protocols
		protos.SetUnencryptedHTTP2(true)
		t.Protocols = &protos
	}
	p.m[k] = t
	return t
}
