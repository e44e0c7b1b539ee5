package api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Console serves the web console (internal/console's handler h) at every
// GET and HEAD path that is not the API's: not under /api/, not a probe
// or /metrics, and not a preview host or path URL, which API.ServeHTTP
// hands to the preview gateway first. Its app routes (/o/…) all answer
// index.html. It is a feature with no routes of the table: the table is
// the API's, held to api/openapi.yaml, and an unknown /api/ path still
// answers the JSON 404 route_not_found. The console's sign-in, sessions
// and CSRF checks are sign-in's (the SignIn feature and console*.go).
func Console(h http.Handler) Feature {
	return Feature{Name: "console", use: func(a *API) { a.console = h }, routes: func(*API) []Route { return nil }}
}

// ServesConsole reports whether r goes to the web console rather than to
// the API or a preview: a GET or HEAD outside /api/, the probes and
// /metrics, and not to a preview host or path URL.
func (a *API) ServesConsole(r *http.Request) bool {
	if a.console == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) || a.IsPreview(r) {
		return false
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch first {
	case "api", "health", "readyz", "metrics":
		return false
	}
	return true
}

// consoleRoutes are the console's sign-in and session (the SignIn
// feature's).
func (a *API) consoleRoutes() []Route {
	return []Route{
		route("POST", "/api/v1/console/session", public, a.createConsoleSession),
		route("GET", "/api/v1/console/session", anyone, a.getConsoleSession),
		route("DELETE", "/api/v1/console/session", anyone, a.deleteConsoleSession),
	}
}

// createConsoleSession signs in to the console with an API key or a
// wallet's answer to a challenge, and sets the cookie. It must come from
// this server's own page (signInOrigin). A refusal is logged with the
// client's address and why.
func (a *API) createConsoleSession(w http.ResponseWriter, r *http.Request) error {
	if err := a.signInOrigin(r); err != nil {
		return err
	}
	var req client.ConsoleSessionRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	token, sess, err := a.openConsoleSession(r, req)
	if err != nil {
		a.logSignInRefusal(r, err)
		return err
	}
	a.endReplacedSession(r)
	a.setConsoleCookie(w, r, token, sess.ExpiresAt)
	writeJSON(w, http.StatusCreated, client.ConsoleSession{CSRFToken: a.signin.CSRFToken(sess.ID), ExpiresAt: sess.ExpiresAt})
	return nil
}

// openConsoleSession opens the session req asks for: with a key, or with
// a nonce and its signature, never both.
func (a *API) openConsoleSession(r *http.Request, req client.ConsoleSessionRequest) (string, store.AuthSession, error) {
	ctx := r.Context()
	wallet := req.Nonce != "" || req.Signature != ""
	switch {
	case req.Key != "" && !wallet:
		token, sess, _, err := a.signin.KeySession(ctx, req.Key)
		return token, sess, err
	case req.Key == "" && wallet:
		token, sess, _, err := a.signin.OpenSession(ctx, req.Nonce, req.Signature)
		return token, sess, err
	}
	return "", store.AuthSession{}, errdefs.InvalidArgument("invalid_console_sign_in",
		`send {"key": "pdk_…"}, or {"nonce": …, "signature": …} after POST /api/auth/challenge`)
}

// logSignInRefusal logs why a sign-in was refused: the key's refusal
// (auth.Refusal) or the wallet sign-in's public code, never what was
// presented.
func (a *API) logSignInRefusal(r *http.Request, err error) {
	reason, keyID := "", ""
	var why *auth.Refusal
	if errors.As(err, &why) {
		reason, keyID = why.Reason, why.KeyID
	} else if pe, ok := errdefs.Public(err); ok && pe.Kind == errdefs.ErrUnauthenticated {
		reason = pe.Code
	}
	if reason != "" {
		a.logger.InfoContext(r.Context(), "authentication failed", "client", a.clientAddr(r), "reason", reason, "key_id", keyID, "method", r.Method, "path", r.URL.Path)
	}
}

// endReplacedSession signs out the console session the browser's cookie
// held before a new sign-in replaces it, so that no session lives on
// that no browser holds. A cookie that is no longer good has nothing to
// end, nor has a cookie carried twice (which of them is the browser's own
// cannot be told).
func (a *API) endReplacedSession(r *http.Request) {
	token, err := a.consoleCookieOf(r)
	if err != nil || !auth.IsSessionToken(token) {
		return
	}
	old, err := a.iam.Authenticate(r.Context(), token)
	if err != nil || (old.Console == "" && old.SessionID == "") {
		return
	}
	if err := a.signin.SignOut(r.Context(), old); err != nil {
		a.logger.WarnContext(r.Context(), "could not end the console session a sign-in replaced", "err", err)
		return
	}
	a.live.endCredential(old.Presented())
}

// errNoConsoleSession answers a credential that is not a console session.
var errNoConsoleSession = errdefs.NotFound("console_session_not_found", "this credential is not a console session: sign in with POST /api/v1/console/session")

// getConsoleSession answers the cookie's session: its CSRF token (the
// console reads it again after a reload) and its expiry.
func (a *API) getConsoleSession(w http.ResponseWriter, r *http.Request) error {
	id := identity(r)
	if id.Console == "" {
		return errNoConsoleSession
	}
	sess, err := a.signin.Session(r.Context(), id.Console)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, client.ConsoleSession{CSRFToken: a.signin.CSRFToken(sess.ID), ExpiresAt: sess.ExpiresAt})
	return nil
}

// deleteConsoleSession signs out: the session is revoked at once, the
// streams it opened end, and the cookie is cleared. Like the sign-in, it
// must come from this server's own page (signInOrigin).
func (a *API) deleteConsoleSession(w http.ResponseWriter, r *http.Request) error {
	id := identity(r)
	if id.Console == "" {
		return errNoConsoleSession
	}
	if err := a.signInOrigin(r); err != nil {
		return err
	}
	if err := a.signin.SignOut(r.Context(), id); err != nil {
		return err
	}
	a.live.endCredential("session:" + id.Console)
	a.clearConsoleCookie(w, r)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// consoleHostCookie is the console's cookie where it is Secure: a
// browser keeps a __Host- cookie only when it is Secure, set over https,
// with Path=/ and no Domain, so no other host (a preview app's page on a
// host of the same site) can set or shadow it.
const consoleHostCookie = "__Host-" + auth.ConsoleCookie

// consoleCookieName is the name of the console's cookie on r: the
// __Host- name when the cookie is Secure (consoleSecure), else the plain
// one (plain http, on loopback). Only that name is read on r.
func (a *API) consoleCookieName(r *http.Request) string {
	if a.consoleSecure(r) {
		return consoleHostCookie
	}
	return auth.ConsoleCookie
}

// consoleSecure reports whether the browser reaches the server over
// HTTPS: the connection is TLS, or users reach it with https behind a
// proxy that ends TLS (ownScheme).
func (a *API) consoleSecure(r *http.Request) bool {
	return a.ownScheme(r) == "https"
}

// setConsoleCookie sets the console's cookie: host-only (no Domain, so
// preview hosts under this host never get it), Path=/, HttpOnly,
// SameSite=Strict, and, when the console is reached over HTTPS, Secure
// and named with the __Host- prefix (consoleCookieName).
func (a *API) setConsoleCookie(w http.ResponseWriter, r *http.Request, token string, until time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name: a.consoleCookieName(r), Value: token, Path: "/", Expires: until, MaxAge: max(1, int(until.Sub(a.now()).Seconds())),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: a.consoleSecure(r),
	})
}

// clearConsoleCookie tells the browser to forget the console's cookie.
func (a *API) clearConsoleCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: a.consoleCookieName(r), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: a.consoleSecure(r),
	})
}
