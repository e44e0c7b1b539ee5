package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// CSRFHeader is the header a request the console's cookie authenticates
// carries its session's CSRF token in, on POST, PUT, PATCH and DELETE.
const CSRFHeader = "X-CSRF-Token"

// authenticateRequest is the credential of a request to a route: its
// Authorization header when it has one (authenticate), else the console's
// cookie (consoleIdentity), else none (401 from authenticate).
func (a *API) authenticateRequest(w http.ResponseWriter, r *http.Request) (auth.Identity, error) {
	if r.Header.Get("Authorization") == "" && a.signin != nil {
		if c, err := r.Cookie(auth.ConsoleCookie); err == nil && c.Value != "" {
			return a.consoleIdentity(w, r, c.Value)
		}
	}
	return a.authenticate(w, r)
}

// consoleIdentity is the principal of the console session token a cookie
// carries, the same the access service gives for the credential it was
// opened with (a key, checked again now, or a wallet session), with the
// session (Identity.Console). A refused cookie is cleared. A request
// the cookie authenticates must also come from this server's origin and,
// for an unsafe method, carry the session's CSRF token
// (consoleRequest).
func (a *API) consoleIdentity(w http.ResponseWriter, r *http.Request, token string) (auth.Identity, error) {
	if !auth.IsSessionToken(token) {
		a.clearConsoleCookie(w, r)
		return auth.Identity{}, auth.RefuseSession("malformed")
	}
	id, err := a.iam.Authenticate(r.Context(), token)
	if err != nil {
		var why *auth.Refusal
		if errors.As(err, &why) {
			a.clearConsoleCookie(w, r)
		}
		return auth.Identity{}, err
	}
	if id.Console == "" {
		id.Console = id.SessionID
	}
	return id, a.consoleRequest(r, id.Console)
}

// Refusals of a request the console's cookie authenticates. They carry
// an auth.Refusal, so the door's log says why.
var (
	errCSRF = errdefs.PermissionDenied("csrf_token_invalid",
		"a request the console's cookie authenticates sends its session's CSRF token as %s on POST, PUT, PATCH and DELETE", CSRFHeader)
	errOrigin = errdefs.PermissionDenied("origin_not_allowed",
		"a request the console's cookie authenticates comes from this server's own origin")
)

// consoleRequest holds a request the cookie of console session id
// authenticated to what a page of another site cannot do: its Origin,
// when it sends one, is this server's (a WebSocket upgrade must send
// one), and an unsafe method carries the session's CSRF token.
func (a *API) consoleRequest(r *http.Request, id string) error {
	if err := a.sameOrigin(r, isUpgrade(r)); err != nil {
		return err
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if !a.signin.ValidCSRF(id, r.Header.Get(CSRFHeader)) {
		return errCSRF.WithCause(&auth.Refusal{Reason: "csrf_token_invalid"})
	}
	return nil
}

// sameOrigin refuses r when its Origin header is not this server's own
// origin, or, with required, when it has none. This server's origin is
// the request's host with the scheme it came over (https over TLS) or
// the one users reach the server with behind a proxy (preview_scheme).
func (a *API) sameOrigin(r *http.Request, required bool) error {
	origin := r.Header.Get("Origin")
	if origin == "" && !required {
		return nil
	}
	scheme, host, ok := strings.Cut(origin, "://")
	scheme = strings.ToLower(scheme)
	own := scheme == "https" && r.TLS != nil || scheme == "http" && r.TLS == nil || scheme == a.preview.Scheme
	if !ok || !own || host == "" || !strings.EqualFold(host, r.Host) {
		return errOrigin.WithCause(&auth.Refusal{Reason: "origin_not_allowed"})
	}
	return nil
}

// isUpgrade reports whether r asks to become a WebSocket.
func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Upgrade") {
		if strings.EqualFold(strings.TrimSpace(v), "websocket") {
			return true
		}
	}
	return false
}
