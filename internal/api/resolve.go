package api

import (
	"fmt"
	"net/http"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// slugRE is the shape of org, workspace and project names.
var slugRE = tenancy.NameRE

// isUUID says whether s has the shape of a record's id.
func isUUID(s string) bool { return store.IsID(s) }

func identity(r *http.Request) auth.Identity {
	id, _ := auth.FromContext(r.Context())
	return id
}

// org is the request's {org}, as guard resolved it for the caller.
func (a *API) org(r *http.Request) (store.Org, error) {
	sc, ok := scopeOf(r)
	if !ok || sc.access.Org.ID == "" {
		return store.Org{}, errNoScope(r)
	}
	return sc.access.Org, nil
}

// workspace is the request's {org}/{workspace}, as guard resolved them.
func (a *API) workspace(r *http.Request) (store.Org, store.Workspace, error) {
	sc, ok := scopeOf(r)
	if !ok || sc.ws.ID == "" {
		return store.Org{}, store.Workspace{}, errNoScope(r)
	}
	return sc.access.Org, sc.ws, nil
}

// access is what the caller may do in the request's org.
func access(r *http.Request) auth.Access {
	sc, _ := scopeOf(r)
	return sc.access
}

// errNoScope is a route whose handler needs a scope guard did not give it:
// a mistake in the route table, never the caller's.
func errNoScope(r *http.Request) error {
	return fmt.Errorf("%s %s: no org or workspace resolved for this route", r.Method, r.Pattern)
}

// projectOf resolves {project}, a UUID or a name, inside
// {org}/{workspace}.
func (a *API) projectOf(r *http.Request) (store.Project, error) {
	_, ws, err := a.workspace(r)
	if err != nil {
		return store.Project{}, err
	}
	return a.tenancy.Project(r.Context(), ws, r.PathValue("project"))
}

// runtimeOf resolves {runtime_id} inside {org}/{workspace}, where guard
// authorized the caller, on the path every door takes (iam.Path).
func (a *API) runtimeOf(r *http.Request) (store.Runtime, error) {
	_, ws, err := a.workspace(r)
	if err != nil {
		return store.Runtime{}, err
	}
	return a.path.InWorkspace(r.Context(), ws.ID, r.PathValue("runtime_id"))
}

// agentOf resolves {runtime_id} inside {org}/{workspace} and dials its
// agent, waking the runtime when it is paused (409 when it is not
// running otherwise); the agent is held until the request ends.
func (a *API) agentOf(r *http.Request) (*agentconn.Client, error) {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return nil, err
	}
	return a.path.Dial(r.Context(), rt)
}

// sandboxOf resolves {sandbox}, our UUID or the provider's sandbox id, in
// the org, among the rows of workspaces the caller sees.
func (a *API) sandboxOf(r *http.Request) (store.Sandbox, error) {
	o, err := a.org(r)
	if err != nil {
		return store.Sandbox{}, err
	}
	return a.runtimes.Sandbox(r.Context(), o.ID, r.PathValue("sandbox"), access(r).SeesWorkspace)
}
