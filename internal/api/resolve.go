package api

import (
	"fmt"
	"net/http"
	"regexp"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// slugRE is the shape of org, workspace and project names.
var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// providerIDRE is the shape of a provider's sandbox id.
var providerIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

func validName(kind, name string) error {
	if !slugRE.MatchString(name) {
		return errdefs.InvalidArgument("invalid_name", "%s name %q must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit", kind, name)
	}
	return nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

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
	key := r.PathValue("project")
	var p store.Project
	switch {
	case isUUID(key):
		p, err = a.store.GetProject(r.Context(), key)
		if err == nil && p.WorkspaceID != ws.ID {
			err = errdefs.ErrNotFound
		}
	case slugRE.MatchString(key):
		p, err = a.store.GetProjectByName(r.Context(), ws.ID, key)
	default:
		return p, errdefs.InvalidArgument("invalid_project", "%q is neither a project id nor a project name", key)
	}
	if errdefs.IsNotFound(err) {
		return p, errdefs.NotFound("project_not_found", "project %q not found", key)
	}
	return p, err
}

// runtimeOf resolves {runtime_id} inside {org}/{workspace}.
func (a *API) runtimeOf(r *http.Request) (store.Runtime, error) {
	_, ws, err := a.workspace(r)
	if err != nil {
		return store.Runtime{}, err
	}
	id := r.PathValue("runtime_id")
	if !isUUID(id) {
		return store.Runtime{}, errdefs.InvalidArgument("invalid_runtime_id", "%q is not a runtime id (a UUID)", id)
	}
	rt, err := a.store.GetRuntime(r.Context(), id)
	if err == nil && rt.WorkspaceID != ws.ID {
		err = errdefs.ErrNotFound
	}
	if errdefs.IsNotFound(err) {
		return rt, errdefs.NotFound("runtime_not_found", "runtime %s not found", id)
	}
	return rt, err
}

// sandboxOf resolves {sandbox}, our UUID or the provider's sandbox id, in
// the org.
func (a *API) sandboxOf(r *http.Request) (store.Sandbox, error) {
	o, err := a.org(r)
	if err != nil {
		return store.Sandbox{}, err
	}
	key := r.PathValue("sandbox")
	var sb store.Sandbox
	switch {
	case isUUID(key):
		sb, err = a.store.GetSandbox(r.Context(), key)
		if errdefs.IsNotFound(err) {
			sb, err = a.store.GetSandboxByProviderID(r.Context(), o.ID, key)
		}
	case providerIDRE.MatchString(key):
		sb, err = a.store.GetSandboxByProviderID(r.Context(), o.ID, key)
	default:
		return sb, errdefs.InvalidArgument("invalid_sandbox_id", "%q is neither a sandbox id nor a provider sandbox id", key)
	}
	if err == nil && (sb.OrgID != o.ID || !access(r).SeesWorkspace(sb.WorkspaceID)) {
		err = errdefs.ErrNotFound
	}
	if errdefs.IsNotFound(err) {
		return sb, errdefs.NotFound("sandbox_not_found", "sandbox %q not found", key)
	}
	return sb, err
}
