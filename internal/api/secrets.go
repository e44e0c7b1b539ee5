package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Secrets live in an org (/org/{org}/secrets) or in one of its workspaces
// (/org/{org}/ws/{workspace}/secrets). Values are write-only: no answer
// holds one.

func secretOut(s store.Secret) client.Secret {
	return client.Secret{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, Name: s.Name, Env: s.Env,
		Brokered: s.Brokered, Hosts: s.Hosts, Version: s.Version, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
}

// secretScope resolves {org} and, on workspace routes, {workspace}: the
// scope a secret route is about.
func (a *API) secretScope(r *http.Request) (orgID, workspaceID string, err error) {
	if r.PathValue("workspace") == "" {
		o, err := a.org(r)
		return o.ID, "", err
	}
	o, ws, err := a.workspace(r)
	return o.ID, ws.ID, err
}

// secretOf resolves {secret}, an id or a name, in the route's scope.
func (a *API) secretOf(r *http.Request) (store.Secret, error) {
	orgID, wsID, err := a.secretScope(r)
	if err != nil {
		return store.Secret{}, err
	}
	return a.secrets.Get(r.Context(), orgID, wsID, r.PathValue("secret"))
}

func (a *API) createSecret(w http.ResponseWriter, r *http.Request) error {
	orgID, wsID, err := a.secretScope(r)
	if err != nil {
		return err
	}
	var req client.CreateSecretRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	spec := secrets.Spec{Name: req.Name, Env: req.Env, Value: &req.Value, Brokered: &req.Brokered}
	if req.Hosts != nil {
		spec.Hosts = &req.Hosts
	}
	s, err := a.secrets.Create(r.Context(), orgID, wsID, spec)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, secretOut(s))
	return nil
}

func (a *API) listSecrets(w http.ResponseWriter, r *http.Request) error {
	orgID, wsID, err := a.secretScope(r)
	if err != nil {
		return err
	}
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	ss, next, err := a.secrets.List(r.Context(), orgID, wsID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ss, next, secretOut))
	return nil
}

func (a *API) getSecret(w http.ResponseWriter, r *http.Request) error {
	s, err := a.secretOf(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, secretOut(s))
	return nil
}

func (a *API) replaceSecret(w http.ResponseWriter, r *http.Request) error {
	s, err := a.secretOf(r)
	if err != nil {
		return err
	}
	var req client.ReplaceSecretRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	s, err = a.secrets.Replace(r.Context(), s, secrets.Spec{Value: req.Value, Env: req.Env, Brokered: req.Brokered, Hosts: req.Hosts})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, secretOut(s))
	return nil
}

func (a *API) deleteSecret(w http.ResponseWriter, r *http.Request) error {
	s, err := a.secretOf(r)
	if err != nil {
		return err
	}
	if err := a.secrets.Delete(r.Context(), s); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
