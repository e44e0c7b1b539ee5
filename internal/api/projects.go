package api

import (
	"context"
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
	"github.com/paddockhq/paddock/pkg/client"
)

const maxDescription = 4096

func (a *API) createProject(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	_, ws, err := a.workspace(r)
	if err != nil {
		return err
	}
	var req client.CreateProjectRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if err := tenancy.ValidName("project", req.Name); err != nil {
		return err
	}
	if len(req.Description) > maxDescription {
		return errdefs.InvalidArgument("invalid_description", "description is longer than %d bytes", maxDescription)
	}
	cfg, err := configIn(req.Runtime)
	if err != nil {
		return err
	}
	if req.Template != "" {
		t, err := a.runtimes.Template(ctx, ws, req.Template)
		if err != nil {
			return err
		}
		cfg = runtime.FromTemplate(t.Config, cfg)
	}
	p, rt, err := a.runtimes.CreateProject(ctx, ws, req.Name, req.Description, cfg)
	if err != nil {
		return err
	}
	out := projectOut(p, rt.ID)
	if req.Start {
		// The project stands whatever the start does: a start that fails
		// is said in the answer, not as the request's error.
		if _, err := a.runtimes.Start(ctx, rt.ID, nil); err != nil {
			_, body := errorBody(ctx, a.logger, err)
			out.StartError = &body
		}
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (a *API) listProjects(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	ws, page, err := a.workspacePage(r)
	if err != nil {
		return err
	}
	ps, next, err := a.tenancy.Projects(ctx, ws.ID, page)
	if err != nil {
		return listError(err)
	}
	out, err := tryListOf(ctx, ps, next, a.projectView)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// projectView renders p with the id of its runtime, if it has one.
func (a *API) projectView(ctx context.Context, p store.Project) (client.Project, error) {
	runtimeID, err := a.runtimes.RuntimeIDOf(ctx, p.ID)
	if err != nil {
		return client.Project{}, err
	}
	return projectOut(p, runtimeID), nil
}

func (a *API) getProject(w http.ResponseWriter, r *http.Request) error {
	p, err := a.projectOf(r)
	if err != nil {
		return err
	}
	out, err := a.projectView(r.Context(), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) deleteProject(w http.ResponseWriter, r *http.Request) error {
	p, err := a.projectOf(r)
	if err != nil {
		return err
	}
	if err := a.runtimes.DeleteProject(r.Context(), p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
