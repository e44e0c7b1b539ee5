package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

func (a *API) createOrg(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if !identity(r).IsInstallationAdmin() {
		writeError(ctx, w, a.logger, errdefs.PermissionDenied("admin_only", "only an installation admin key can create orgs"))
		return
	}
	var req client.CreateOrgRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	if err := validName("org", req.Name); err != nil {
		writeError(ctx, w, a.logger, err)
		return
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
		writeError(ctx, w, a.logger, err)
		return
	}
	o, err = a.store.GetOrg(ctx, o.ID)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	writeJSON(w, http.StatusCreated, orgOut(o))
}

func (a *API) listOrgs(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	page, err := pageFrom(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	out := client.List[client.Org]{Items: []client.Org{}}
	if id := identity(r); id.OrgID != "" {
		// An org-scoped key sees its own org only.
		o, err := a.store.GetOrg(ctx, id.OrgID)
		if err != nil {
			writeError(ctx, w, a.logger, err)
			return
		}
		out.Items = append(out.Items, orgOut(o))
		writeJSON(w, http.StatusOK, out)
		return
	}
	orgs, next, err := a.store.ListOrgs(ctx, page)
	if err != nil {
		writeError(ctx, w, a.logger, listError(err))
		return
	}
	for _, o := range orgs {
		out.Items = append(out.Items, orgOut(o))
	}
	out.NextCursor = next
	writeJSON(w, http.StatusOK, out)
}

func (a *API) getOrg(w http.ResponseWriter, r *http.Request) {
	o, err := a.org(r)
	if err != nil {
		writeError(r.Context(), w, a.logger, err)
		return
	}
	writeJSON(w, http.StatusOK, orgOut(o))
}
