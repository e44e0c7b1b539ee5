package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/pkg/client"
)

const maxDescription = 4096

func (a *API) createProject(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	_, ws, err := a.workspace(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	var req client.CreateProjectRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	if err := validName("project", req.Name); err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	if len(req.Description) > maxDescription {
		writeError(ctx, w, a.logger, errdefs.InvalidArgument("invalid_description", "description is longer than %d bytes", maxDescription))
		return
	}
	p, rt, err := a.runtimes.CreateProject(ctx, ws, req.Name, req.Description, configIn(req.Runtime))
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	writeJSON(w, http.StatusCreated, projectOut(p, rt.ID))
}

func (a *API) listProjects(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	_, ws, err := a.workspace(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	page, err := pageFrom(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	ps, next, err := a.store.ListProjects(ctx, ws.ID, page)
	if err != nil {
		writeError(ctx, w, a.logger, listError(err))
		return
	}
	out := client.List[client.Project]{Items: make([]client.Project, 0, len(ps)), NextCursor: next}
	for _, p := range ps {
		rt, err := a.store.GetRuntimeByProject(ctx, p.ID)
		if err != nil && !errdefs.IsNotFound(err) {
			writeError(ctx, w, a.logger, err)
			return
		}
		out.Items = append(out.Items, projectOut(p, rt.ID))
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *API) getProject(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	_, ws, err := a.workspace(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	p, err := a.project(r, ws)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	rt, err := a.store.GetRuntimeByProject(ctx, p.ID)
	if err != nil && !errdefs.IsNotFound(err) {
		writeError(ctx, w, a.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, projectOut(p, rt.ID))
}

func (a *API) deleteProject(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	_, ws, err := a.workspace(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	p, err := a.project(r, ws)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	if err := a.runtimes.DeleteProject(ctx, p); err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
