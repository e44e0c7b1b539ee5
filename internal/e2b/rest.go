package e2b

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// The control-plane REST API: what the e2b SDK's Sandbox class calls on
// E2B_API_URL. A request carries a paddock key (pdk_…) in X-API-KEY (or
// Authorization: Bearer), verified by the access service and rate-limited
// by the API's door; every route authorizes in the key's workspace
// (keyWorkspace) with the role it needs. Errors are E2B's shape,
// {"code": <status>, "message": "…"}, which the SDK parses.

// ClientID is the clientID every answer carries.
const ClientID = "paddock"

// DefaultWorkspace is the workspace an org-wide key's sandboxes live in.
const DefaultWorkspace = "default"

// Store is what the surface keeps and looks up beside the services: its
// own records (store.E2BQueries) and the orgs and workspaces keys name.
type Store interface {
	store.E2BQueries
	GetOrg(ctx context.Context, id string) (store.Org, error)
	GetWorkspace(ctx context.Context, id string) (store.Workspace, error)
	GetWorkspaceByName(ctx context.Context, orgID, name string) (store.Workspace, error)
	GetProject(ctx context.Context, id string) (store.Project, error)
}

// newREST is the control-plane REST API.
func (g *Gateway) newREST() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range g.restRoutes() {
		mux.Handle(rt.pattern, g.route(rt))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "this paddock does not serve "+r.Method+" "+r.URL.Path+" of the E2B API")
	})
	return mux
}

// restRoute is one route: its pattern, the role it needs in the key's
// workspace, and its handler.
type restRoute struct {
	pattern string
	need    iam.Need
	serve   func(c *call) error
}

func (g *Gateway) restRoutes() []restRoute {
	return []restRoute{
		{"POST /sandboxes", iam.Member, g.createV1},
		{"POST /v2/sandboxes", iam.Member, g.createV2},
		{"GET /sandboxes", iam.Viewer, g.listV1},
		{"GET /v2/sandboxes", iam.Viewer, g.listV2},
		{"GET /sandboxes/metrics", iam.Member, g.metricsOfMany},
		{"GET /sandboxes/{id}", iam.Viewer, g.get},
		{"DELETE /sandboxes/{id}", iam.Member, g.kill},
		{"GET /sandboxes/{id}/metrics", iam.Member, g.metrics},
		{"POST /sandboxes/{id}/timeout", iam.Member, g.setTimeout},
		{"POST /sandboxes/{id}/refreshes", iam.Member, g.refresh},
		{"POST /sandboxes/{id}/pause", iam.Member, g.pause},
		{"POST /sandboxes/{id}/resume", iam.Member, g.resume},
		{"POST /sandboxes/{id}/connect", iam.Member, g.connect},
		{"POST /v2/sandboxes/{id}/connect", iam.Member, g.connect},
	}
}

// call is one authorized request.
type call struct {
	w  http.ResponseWriter
	r  *http.Request
	p  iam.Principal
	sc iam.Scope
}

func (c *call) ctx() context.Context { return c.r.Context() }

// route authenticates, authorizes and serves one route, answering any
// error in E2B's shape.
func (g *Gateway) route(rt restRoute) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.o.MaxJSON > 0 {
			r.Body = http.MaxBytesReader(w, r.Body, g.o.MaxJSON)
		}
		c := &call{w: w, r: r}
		err := g.admit(c, rt)
		if err == nil {
			err = rt.serve(c)
		}
		if err != nil {
			g.fail(c, err)
		}
	})
}

// admit verifies the key (through the door, which spends its rate) and
// authorizes rt's need in the key's workspace.
func (g *Gateway) admit(c *call, rt restRoute) error {
	p, err := g.o.Door.Admit(c.w, c.r, func() (auth.Identity, error) {
		key := apiKeyOf(c.r)
		if key == "" {
			return auth.Identity{}, errdefs.Unauthenticated("missing_api_key",
				"send a paddock API key (pdk_…) as X-API-KEY, as E2B_API_KEY does").WithCause(&auth.Refusal{Reason: "no_credentials"})
		}
		return g.o.IAM.VerifyKey(c.ctx(), key)
	})
	if err != nil {
		return err
	}
	c.p = p
	c.sc, err = g.keyWorkspace(c.ctx(), p, rt)
	return err
}

// apiKeyOf is the key a request presents: X-API-KEY, else a bearer.
func apiKeyOf(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-API-KEY")); k != "" {
		return k
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(tok)
	}
	return ""
}

// keyWorkspace is where p's sandboxes live, authorized for rt's need: the
// workspace a narrowed key is kept to, else its org's "default".
func (g *Gateway) keyWorkspace(ctx context.Context, p iam.Principal, rt restRoute) (iam.Scope, error) {
	if p.OrgID == "" {
		return iam.Scope{}, errdefs.PermissionDenied("e2b_needs_org_key",
			"an installation key belongs to no org, so its sandboxes would live nowhere: use a key of an org (paddock key create), narrowed to a workspace or not")
	}
	o, err := g.o.Store.GetOrg(ctx, p.OrgID)
	if err != nil {
		return iam.Scope{}, err
	}
	var ws store.Workspace
	if p.WorkspaceID != "" {
		ws, err = g.o.Store.GetWorkspace(ctx, p.WorkspaceID)
	} else {
		ws, err = g.o.Store.GetWorkspaceByName(ctx, o.ID, DefaultWorkspace)
	}
	if errdefs.IsNotFound(err) {
		return iam.Scope{}, errdefs.FailedPrecondition("e2b_no_workspace",
			"org %q has no workspace named %q, where the sandboxes of a key not narrowed to a workspace live: create it, or use a key narrowed to a workspace", o.Name, DefaultWorkspace)
	}
	if err != nil {
		return iam.Scope{}, err
	}
	return g.o.IAM.Authorize(ctx, p, rt.need, iam.Target{Org: o.Name, Workspace: ws.Name, Action: "E2B " + rt.pattern})
}

// e2bError is E2B's error body.
type e2bError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// fail answers err in E2B's shape: its status, and its public message
// (an internal error's is never sent).
func (g *Gateway) fail(c *call, err error) {
	status, _ := g.o.Door.Status(err)
	msg := http.StatusText(status)
	if pe, ok := errdefs.Public(err); ok && status != http.StatusInternalServerError {
		msg = pe.Message
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		status, msg = http.StatusRequestEntityTooLarge, "the request body is too large"
	}
	if status >= 500 {
		g.o.Logger.ErrorContext(c.ctx(), "e2b request failed", "method", c.r.Method, "path", c.r.URL.Path,
			"request_id", g.o.Door.RequestID(c.ctx()), "err", err)
	}
	writeError(c.w, status, msg)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, e2bError{Code: status, Message: msg})
}

// decodeBody decodes an optional JSON body into v: an empty one leaves v
// as it is. Fields the SDK sends that paddock does not read are
// ignored.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	err := dec.Decode(v)
	var mbe *http.MaxBytesError
	switch {
	case err == nil || errors.Is(err, io.EOF):
		return nil
	case errors.As(err, &mbe):
		return err
	}
	return errdefs.InvalidArgument("invalid_body", "the request body is not valid JSON of this request: %v", err)
}
