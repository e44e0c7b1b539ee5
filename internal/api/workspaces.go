package api

import (
	"net/http"

	"github.com/paddockhq/paddock/pkg/client"
)

func (a *API) createWorkspace(w http.ResponseWriter, r *http.Request) error {
	o, err := a.org(r)
	if err != nil {
		return err
	}
	var req client.CreateWorkspaceRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	ws, err := a.tenancy.CreateWorkspace(r.Context(), o, req.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, workspaceOut(ws))
	return nil
}

// listWorkspaces lists the org's workspaces; a caller kept to some
// workspaces sees those, in one page.
func (a *API) listWorkspaces(w http.ResponseWriter, r *http.Request) error {
	o, page, err := a.orgPage(r)
	if err != nil {
		return err
	}
	wss, next, err := a.tenancy.Workspaces(r.Context(), o.ID, access(r).Workspaces, page)
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
