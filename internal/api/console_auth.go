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
// cookie (consoleIdentity), else none (401 from authenticate). A request
// that carries the console's cookie more than once is refused, and no
// cookie is cleared: another host of the same site (a preview app's
// page) may have set one of them, and which is the console's own cannot
// be told.
func (a *API) authenticateRequest(w http.ResponseWriter, r *http.Request) (auth.Identity, error) {
	if r.Header.Get("Authorization") == "" && a.signin != nil {
		token, err := a.consoleCookieOf(r)
		if err != nil {
			return auth.Identity{}, err
		}
		if token != "" {
			return a.consoleIdentity(w, r, token)
		}
	}
	return a.authenticate(w, r)
}

// errAmbiguousCookie answers a request that carries the console's cookie
// more than once.
var errAmbiguousCookie = errdefs.Unauthenticated("ambiguous_session_cookie",
	"the request carries the console's cookie more than once (another site's page may have set one): clear this site's cookies and sign in again")

// consoleCookieOf is the value of the console's cookie r carries (the
// name consoleCookieName gives for r), "" when it has none, and
// errAmbiguousCookie when it carries that name more than once.
func (a *API) consoleCookieOf(r *http.Request) (string, error) {
	name, token, n := a.consoleCookieName(r), "", 0
	for _, c := range r.Cookies() {
		if c.Name == name {
			token, n = c.Value, n+1
		}
	}
	if n > 1 {
		return "", errAmbiguousCookie.WithCause(&auth.Refusal{Reason: "ambiguous_session_cookie"})
	}
	return token, nil
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
// one), its Sec-Fetch-Site, when it sends one, says same-origin or none
// (whatever the method: a same-site page's GET may not wake a runtime
// through the files or terminal routes), and an unsafe method carries
// the session's CSRF token.
func (a *API) consoleRequest(r *http.Request, id string) error {
	if err := a.sameOrigin(r, isUpgrade(r)); err != nil {
		return err
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return errOrigin.WithCause(&auth.Refusal{Reason: "origin_not_allowed"})
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

// signInOrigin holds a sign-in or sign-out to this server's own pages:
// its Origin is this server's, or, when it sends none, its
// Sec-Fetch-Site says same-origin. A browser sends Origin on the
// console's fetch POST and DELETE; a request with neither is refused.
func (a *API) signInOrigin(r *http.Request) error {
	if r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		return nil
	}
	if err := a.sameOrigin(r, true); err != nil {
		return err
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin":
		return nil
	}
	return errOrigin.WithCause(&auth.Refusal{Reason: "origin_not_allowed"})
}

// sameOrigin refuses r when its Origin header is not this server's own
// origin, or, with required, when it has none. This server's origin is
// the request's host with the one scheme ownScheme gives.
func (a *API) sameOrigin(r *http.Request, required bool) error {
	origin := r.Header.Get("Origin")
	if origin == "" && !required {
		return nil
	}
	scheme, host, ok := strings.Cut(origin, "://")
	if !ok || !strings.EqualFold(scheme, a.ownScheme(r)) || host == "" || !strings.EqualFold(host, r.Host) {
		return errOrigin.WithCause(&auth.Refusal{Reason: "origin_not_allowed"})
	}
	return nil
}

// ownScheme is the scheme of this server's own origin: https when the
// connection is TLS, else the one users reach the server with
// (preview_scheme: https behind a proxy that ends TLS, else http).
func (a *API) ownScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return a.preview.Scheme
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
