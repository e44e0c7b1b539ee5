package api

import (
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

func (a *API) createWorkspace(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	o, err := a.org(r)
	if err != nil {
		return err
	}
	var req client.CreateWorkspaceRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if err := validName("workspace", req.Name); err != nil {
		return err
	}
	ws := store.Workspace{ID: uuid.NewString(), OrgID: o.ID, Name: req.Name, CreatedAt: a.now()}
	if err := a.store.CreateWorkspace(ctx, ws); err != nil {
		if errdefs.IsConflict(err) {
			err = errdefs.Conflict("workspace_exists", "a workspace named %q already exists in org %q", req.Name, o.Name).WithCause(err)
		}
		return err
	}
	if ws, err = a.store.GetWorkspace(ctx, ws.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, workspaceOut(ws))
	return nil
}

func (a *API) listWorkspaces(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	o, page, err := a.orgPage(r)
	if err != nil {
		return err
	}
	if visible := access(r).Workspaces; visible != nil {
		// A caller kept to some workspaces: those, in one page.
		wss := make([]store.Workspace, 0, len(visible))
		for _, id := range visible {
			ws, err := a.store.GetWorkspace(ctx, id)
			if errdefs.IsNotFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			wss = append(wss, ws)
		}
		slices.SortFunc(wss, func(x, y store.Workspace) int { return x.CreatedAt.Compare(y.CreatedAt) })
		writeJSON(w, http.StatusOK, listOf(wss, "", workspaceOut))
		return nil
	}
	wss, next, err := a.store.ListWorkspaces(ctx, o.ID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(wss, next, workspaceOut))
	return nil
}

func (a *API) getWorkspace(w http.ResponseWriter, r *http.Request) error {
	_, ws, err := a.workspace(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, workspaceOut(ws))
	return nil
}
