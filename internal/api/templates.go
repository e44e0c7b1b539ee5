package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
	"github.com/paddockhq/paddock/pkg/client"
)

// templateOut renders t with its config as the template gives it: what it
// leaves out stays out (the installation's defaults apply at a project's
// creation).
func templateOut(t store.Template) client.Template {
	c := configOut(t.Config)
	c.RootFS, c.User = t.Config.RootFS, t.Config.User
	if t.Config.Network.Mode == "" {
		c.Network = nil
	}
	return client.Template{
		ID: t.ID, OrgID: t.OrgID, WorkspaceID: t.WorkspaceID, Name: t.Name,
		Description: t.Description, Runtime: c, CreatedAt: t.CreatedAt,
	}
}

func (a *API) createTemplate(w http.ResponseWriter, r *http.Request) error {
	_, ws, err := a.workspace(r)
	if err != nil {
		return err
	}
	var req client.CreateTemplateRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if err := tenancy.ValidName("template", req.Name); err != nil {
		return err
	}
	if len(req.Description) > maxDescription {
		return errdefs.InvalidArgument("invalid_description", "description is longer than %d bytes", maxDescription)
	}
	cfg, err := configIn(req.Runtime)
	if err != nil {
		return err
	}
	t, err := a.runtimes.CreateTemplate(r.Context(), ws, req.Name, req.Description, cfg)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, templateOut(t))
	return nil
}

func (a *API) listTemplates(w http.ResponseWriter, r *http.Request) error {
	ws, page, err := a.workspacePage(r)
	if err != nil {
		return err
	}
	ts, next, err := a.runtimes.Templates(r.Context(), ws.ID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ts, next, templateOut))
	return nil
}

// templateOf resolves {template}, a UUID or a name, inside
// {org}/{workspace}.
func (a *API) templateOf(r *http.Request) (store.Template, error) {
	_, ws, err := a.workspace(r)
	if err != nil {
		return store.Template{}, err
	}
	return a.runtimes.Template(r.Context(), ws, r.PathValue("template"))
}

func (a *API) getTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := a.templateOf(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, templateOut(t))
	return nil
}

func (a *API) deleteTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := a.templateOf(r)
	if err != nil {
		return err
	}
	if err := a.runtimes.DeleteTemplate(r.Context(), t); err != nil {
		return err
	}
	a.removeBuiltImages(r, t)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
