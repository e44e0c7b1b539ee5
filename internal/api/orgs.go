package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

func (a *API) createOrg(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var req client.CreateOrgRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if err := validName("org", req.Name); err != nil {
		return err
	}
	o := store.Org{ID: uuid.NewString(), Name: req.Name, CreatedAt: a.now()}
	err := a.store.InTx(ctx, func(q store.Queries) error {
		if err := q.CreateOrg(ctx, o); err != nil {
			return err
		}
		if a.ledger != nil {
			return a.ledger.OpenOrg(ctx, q, o.ID) // its starting credits, if any
		}
		return nil
	})
	if err != nil {
		if errdefs.IsConflict(err) {
			err = errdefs.Conflict("org_exists", "an org named %q already exists", req.Name).WithCause(err)
		}
		return err
	}
	o, err = a.store.GetOrg(ctx, o.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, orgOut(o))
	return nil
}

func (a *API) listOrgs(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	switch id := identity(r); {
	case id.OrgID != "":
		// An org-scoped key sees its own org only.
		o, err := a.store.GetOrg(ctx, id.OrgID)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, listOf([]store.Org{o}, "", orgOut))
		return nil
	case !id.Installation:
		// A session sees the orgs its user is a member of.
		ms, err := a.store.ListUserOrgs(ctx, id.UserID)
		if err != nil {
			return err
		}
		orgs := make([]store.Org, 0, len(ms))
		for _, m := range ms {
			o, err := a.store.GetOrg(ctx, m.OrgID)
			if err != nil {
				return err
			}
			orgs = append(orgs, o)
		}
		writeJSON(w, http.StatusOK, listOf(orgs, "", orgOut))
		return nil
	}
	orgs, next, err := a.store.ListOrgs(ctx, page)
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
