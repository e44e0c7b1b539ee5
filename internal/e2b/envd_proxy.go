package e2b

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strings"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/auth"
)

// envdProxy is the reverse proxy from an admitted envd request to the
// agent's own envd routes, over the agent link (agentconn.Forwarder).
func (g *Gateway) envdProxy(agent *agentconn.Client, sandboxID string, who auth.Identity) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.Header = envdHeaders(pr.In.Header)
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "paddock-agent"
		},
		Transport: agent.Forwarder(),
		// A stream the client or a revocation ended is no error of ours.
		ErrorLog: slog.NewLogLogger(g.o.Logger.Handler(), slog.LevelDebug),
		// Connect server streams (and the keepalives envd sends in them)
		// reach the client as they are written.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				// The client went away, or the credential was revoked:
				// the call has ended; nobody is left to answer.
				return
			}
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				err = errTooLarge(tooLarge.Limit)
			} else {
				err = &unreachableError{err}
			}
			g.envdFail(w, r, sandboxID, err)
		},
		ModifyResponse: func(resp *http.Response) error {
			g.o.Logger.DebugContext(resp.Request.Context(), "envd", "sandbox", sandboxID, "credential", who.Credential(),
				"method", resp.Request.Method, "path", resp.Request.URL.Path, "status", resp.StatusCode)
			return nil
		},
	}
}

// envdHeaders are the headers of an envd request that reach the agent:
// what envd reads (the content's type and encoding, ranges and
// conditions of a download, a file's metadata (X-Metadata-*), Connect's
// and envd's own, and the user as 'Authorization: Basic <user>:'), and
// nothing of
// the caller's credentials (X-Access-Token, X-API-KEY, cookies, other
// Authorization schemes) or of E2B's routing (E2b-*).
func envdHeaders(in http.Header) http.Header {
	out := http.Header{}
	for name, vs := range in {
		switch {
		case name == "Accept", name == "Accept-Encoding", name == "Content-Type", name == "Content-Encoding",
			name == "User-Agent", name == "Keepalive-Ping-Interval", strings.HasPrefix(name, "Connect-"),
			name == "Range", strings.HasPrefix(name, "If-"), strings.HasPrefix(name, "X-Metadata-"):
			out[name] = vs
		}
	}
	if a := in.Get("Authorization"); len(a) > 6 && strings.EqualFold(a[:6], "Basic ") {
		out.Set("Authorization", a)
	}
	return out
}
