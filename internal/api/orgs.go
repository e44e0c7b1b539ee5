package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/tenancy"
	"github.com/paddockhq/paddock/pkg/client"
)

func (a *API) createOrg(w http.ResponseWriter, r *http.Request) error {
	var req client.CreateOrgRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	o, err := a.tenancy.CreateOrg(r.Context(), req.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, orgOut(o))
	return nil
}

// listOrgs lists the orgs the caller sees: an org-scoped key its own, a
// session its user's, the installation admin every org.
func (a *API) listOrgs(w http.ResponseWriter, r *http.Request) error {
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	id := identity(r)
	v := tenancy.Viewer{OrgID: id.OrgID, UserID: id.UserID, Installation: id.Installation}
	orgs, next, err := a.tenancy.Orgs(r.Context(), v, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(orgs, next, orgOut))
	return nil
}

func (a *API) getOrg(w http.ResponseWriter, r *http.Request) error {
	o, err := a.org(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, orgOut(o))
	return nil
}
