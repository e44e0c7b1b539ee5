package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

func (a *API) createWorkspace(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	o, err := a.org(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	var req client.CreateWorkspaceRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	if err := validName("workspace", req.Name); err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	ws := store.Workspace{ID: uuid.NewString(), OrgID: o.ID, Name: req.Name, CreatedAt: a.now()}
	if err := a.store.CreateWorkspace(ctx, ws); err != nil {
		if errdefs.IsConflict(err) {
			err = errdefs.Conflict("workspace_exists", "a workspace named %q already exists in org %q", req.Name, o.Name).WithCause(err)
		}
		writeError(ctx, w, a.logger, err)
		return
	}
	if ws, err = a.store.GetWorkspace(ctx, ws.ID); err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	writeJSON(w, http.StatusCreated, workspaceOut(ws))
}

func (a *API) listWorkspaces(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	o, err := a.org(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	page, err := pageFrom(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	wss, next, err := a.store.ListWorkspaces(ctx, o.ID, page)
	if err != nil {
		writeError(ctx, w, a.logger, listError(err))
		return
	}
	out := client.List[client.Workspace]{Items: make([]client.Workspace, 0, len(wss)), NextCursor: next}
	for _, ws := range wss {
		out.Items = append(out.Items, workspaceOut(ws))
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *API) getWorkspace(w http.ResponseWriter, r *http.Request) {
	_, ws, err := a.workspace(r)
	if err != nil {
		writeError(r.Context(), w, a.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, workspaceOut(ws))
}
