package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Need is what a route asks of its caller: nothing, any credential, the
// installation admin, or at least a role in the route's org; the access
// service decides it (iam.Authorize).
type Need = iam.Need

const (
	public       = iam.Public
	anyone       = iam.Any
	installation = iam.Installation
	viewer       = iam.Viewer
	member       = iam.Member
	admin        = iam.Admin
	owner        = iam.Owner
)

// body is how large a route's request body may be.
type body int

const (
	jsonBody body = iota
	uploadBody
	bundleBody
)

// scope is what guard resolved for a request: the org and workspace of its
// path, and what the caller may do there.
type scope struct {
	access auth.Access
	ws     store.Workspace // zero on org-wide routes
}

type scopeKey struct{}

func scopeOf(r *http.Request) (scope, bool) {
	s, ok := r.Context().Value(scopeKey{}).(scope)
	return s, ok
}

// guard is what every route goes through before its handler, in this
// order, so that no handler runs for a caller it should not:
//
//  1. the request body is bounded (413 past the route's limit);
//  2. the credential, an API key or a session token (401), on all but
//     public routes: the Authorization header's, or without one the
//     console's cookie, held to its origin and CSRF token (403,
//     console_auth.go);
//  3. a token bucket (429 with Retry-After): the credential's, or, for a
//     public route or a refused credential, the client address's;
//  4. the org and workspace in the path: one the caller may not see is
//     not found (404), exactly as one that does not exist;
//  5. the role the route needs in that org (403), and a key narrowed to a
//     workspace kept to its workspace's routes (403).
func (a *API) guard(rt Route, next http.Handler) http.Handler {
	limit := a.limits.JSONBodyBytes
	switch rt.Body {
	case uploadBody:
		limit = a.limits.UploadBodyBytes
	case bundleBody:
		limit = a.limits.BundleBodyBytes
	}
	meta := rt.Need == public && !strings.HasPrefix(rt.Pattern, "/api/")
	return a.handle(func(w http.ResponseWriter, r *http.Request) error {
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		if meta {
			// Probes and scrapes are not rate limited.
			return serve(next, w, r)
		}
		if rt.Need == public {
			if err := a.takeAddress(w, r); err != nil {
				return err
			}
			return serve(next, w, r)
		}
		id, err := a.admit(w, r, func() (auth.Identity, error) { return a.authenticateRequest(w, r) })
		if err != nil {
			return err
		}
		ctx := auth.WithIdentity(r.Context(), id)
		r = r.WithContext(ctx)
		sc, err := a.authorize(r, rt, id)
		if err != nil {
			return err
		}
		return serve(next, w, r.WithContext(context.WithValue(ctx, scopeKey{}, sc)))
	})
}

func serve(h http.Handler, w http.ResponseWriter, r *http.Request) error {
	h.ServeHTTP(w, r)
	return nil
}

// admit authenticates r with authn and spends the token the request
// draws: its credential's bucket when authn accepts it, the client
// address's when authn refuses it (takeAddress). A refusal is logged,
// with the client's address and why, only once the address had a token
// for it: a flood answered 429 writes no line. Every door that takes a
// credential (the API's routes, previews) comes through here.
func (a *API) admit(w http.ResponseWriter, r *http.Request, authn func() (auth.Identity, error)) (auth.Identity, error) {
	id, err := authn()
	if err == nil {
		return id, a.takeCredential(r.Context(), w, id)
	}
	if r.Context().Err() != nil {
		// A client gone while its key was looked up is no failed
		// authentication.
		return id, err
	}
	if lerr := a.takeAddress(w, r); lerr != nil {
		return id, lerr
	}
	var why *auth.Refusal
	if errors.As(err, &why) {
		a.logger.InfoContext(r.Context(), "authentication failed", "client", a.clientAddr(r), "reason", why.Reason, "key_id", why.KeyID, "method", r.Method, "path", r.URL.Path)
	}
	return id, err
}

// authenticate verifies the bearer credential (iam.Authenticate). A
// refusal carries an auth.Refusal that says why, never what was
// presented, for admit's log.
func (a *API) authenticate(w http.ResponseWriter, r *http.Request) (auth.Identity, error) {
	cred, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok || cred == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="paddock"`)
		return auth.Identity{}, errdefs.Unauthenticated("missing_api_key", "send an API key or a session token as 'Authorization: Bearer …'").
			WithCause(&auth.Refusal{Reason: "no_credentials"})
	}
	id, err := a.iam.Authenticate(r.Context(), cred)
	var why *auth.Refusal
	if err != nil && errors.As(err, &why) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="paddock", error="invalid_token"`)
	}
	return id, err
}

// authorize asks the access service whether id may use the route, in the
// route's org and workspace. The route table's own mistakes (an org route
// any credential may use, a route outside an org that asks a role) are
// the server's.
func (a *API) authorize(r *http.Request, rt Route, id auth.Identity) (scope, error) {
	pattern := rt.scope()
	hasOrg := strings.Contains(pattern, "{org}")
	switch {
	case rt.Need == anyone && hasOrg:
		return scope{}, fmt.Errorf("route %s %s: an org route needs a role", rt.Method, rt.Pattern)
	case !hasOrg && rt.Need != installation && rt.Need != anyone:
		return scope{}, fmt.Errorf("route %s %s: a route outside an org needs no role", rt.Method, rt.Pattern)
	}
	t := iam.Target{Narrow: rt.Narrow, Action: r.Method + " " + rt.Pattern}
	if hasOrg {
		t.Org = r.PathValue("org")
	}
	if strings.Contains(pattern, "{workspace}") {
		t.Workspace = r.PathValue("workspace")
	}
	sc, err := a.iam.Authorize(r.Context(), id, rt.Need, t)
	if err != nil {
		return scope{}, err
	}
	return scope{access: sc.Access, ws: sc.Workspace}, nil
}
