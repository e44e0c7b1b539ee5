package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Need is what a route asks of its caller: nothing, any credential, the
// installation admin, or at least a role in the route's org.
type Need string

const (
	public       Need = "public"
	anyone       Need = "any"
	installation Need = "installation"
	viewer            = Need(auth.RoleViewer)
	member            = Need(auth.RoleMember)
	admin             = Need(auth.RoleAdmin)
	owner             = Need(auth.RoleOwner)
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
//     public routes;
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
		id, err := a.admit(w, r, func() (auth.Identity, error) { return a.authenticate(w, r) })
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
		return id, a.takeCredential(w, id)
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

// authenticate verifies the bearer credential. A refusal carries an
// auth.Refusal that says why, never what was presented, for admit's log.
// A malformed key is refused before any lookup (auth.WellFormed).
func (a *API) authenticate(w http.ResponseWriter, r *http.Request) (auth.Identity, error) {
	ctx := r.Context()
	cred, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok || cred == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="paddock"`)
		return auth.Identity{}, errdefs.Unauthenticated("missing_api_key", "send an API key or a session token as 'Authorization: Bearer …'").
			WithCause(&auth.Refusal{Reason: "no_credentials"})
	}
	var id auth.Identity
	var err error
	if auth.IsSessionToken(cred) {
		if a.signin == nil {
			err = errdefs.Unauthenticated("invalid_session", "this server does not issue session tokens")
		} else {
			id, err = a.signin.Verify(ctx, cred)
		}
	} else {
		id, err = a.keys.Verify(ctx, cred)
	}
	var why *auth.Refusal
	if err != nil && errors.As(err, &why) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="paddock", error="invalid_token"`)
	}
	return id, err
}

// authorize resolves the route's org and workspace for id and checks the
// role the route needs.
func (a *API) authorize(r *http.Request, rt Route, id auth.Identity) (scope, error) {
	hasOrg := strings.Contains(rt.Pattern, "{org}")
	switch {
	case rt.Need == anyone:
		if hasOrg {
			return scope{}, fmt.Errorf("route %s %s: an org route needs a role", rt.Method, rt.Pattern)
		}
		return scope{}, nil
	case !hasOrg:
		if rt.Need != installation {
			return scope{}, fmt.Errorf("route %s %s: a route outside an org needs no role", rt.Method, rt.Pattern)
		}
		if !id.Installation {
			return scope{}, errInstallationOnly
		}
		return scope{}, nil
	}
	ctx := r.Context()
	name := r.PathValue("org")
	if !slugRE.MatchString(name) {
		return scope{}, errdefs.InvalidArgument("invalid_org", "%q is not an org name", name)
	}
	o, err := a.store.GetOrgByName(ctx, name)
	if err != nil && !errdefs.IsNotFound(err) {
		return scope{}, err
	}
	var acc auth.Access
	ok := false
	if err == nil {
		if acc, ok, err = auth.OrgAccess(ctx, a.store, id, o); err != nil {
			return scope{}, err
		}
	}
	if !ok {
		return scope{}, errdefs.NotFound("org_not_found", "org %q not found", name)
	}
	sc := scope{access: acc}
	if strings.Contains(rt.Pattern, "{workspace}") {
		wsName := r.PathValue("workspace")
		if !slugRE.MatchString(wsName) {
			return scope{}, errdefs.InvalidArgument("invalid_workspace", "%q is not a workspace name", wsName)
		}
		ws, err := a.store.GetWorkspaceByName(ctx, o.ID, wsName)
		if err == nil && !acc.SeesWorkspace(ws.ID) {
			err = errdefs.ErrNotFound
		}
		if errdefs.IsNotFound(err) {
			return scope{}, errdefs.NotFound("workspace_not_found", "workspace %q not found in org %q", wsName, o.Name)
		}
		if err != nil {
			return scope{}, err
		}
		sc.ws = ws
	} else if id.WorkspaceID != "" && !rt.Narrow {
		return scope{}, errdefs.PermissionDenied("key_narrowed_to_workspace", "this key is narrowed to one workspace; %s %s is an org-wide route", r.Method, rt.Pattern)
	}
	if rt.Need == installation {
		if !id.Installation {
			return scope{}, errInstallationOnly
		}
		return sc, nil
	}
	if !acc.Role.AtLeast(auth.Role(rt.Need)) {
		return scope{}, errdefs.PermissionDenied("role_too_low", "this needs the %s role in org %q; the caller has %s", rt.Need, o.Name, acc.Role)
	}
	return sc, nil
}

var errInstallationOnly = errdefs.PermissionDenied("installation_admin_only", "only the installation admin may do this")
