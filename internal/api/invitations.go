package api

import (
	"net/http"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/pkg/client"
)

// Invitations: an org admin who adds someone by address invites them; the
// access service keeps the rules (iam invitations.go).

// DefaultInvitationTTL is how long an invitation stays open unless the
// installation says otherwise.
const DefaultInvitationTTL = iam.DefaultInvitationTTL

// MaxPendingInvitations bounds an org's pending invitations.
const MaxPendingInvitations = iam.MaxPendingInvitations

// invitationOut renders inv.
func invitationOut(inv iam.Invitation) client.Invitation {
	return client.Invitation{
		ID: inv.ID, OrgID: inv.OrgID, Org: inv.Org, Email: inv.Email, Wallet: inv.Wallet, Role: inv.Role,
		InvitedBy: inv.InviterID, Inviter: inv.Inviter, State: inv.State,
		CreatedAt: inv.CreatedAt, ExpiresAt: inv.ExpiresAt, DecidedAt: timePtr(inv.DecidedAt),
	}
}

// listOrgInvitations: GET …/org/{org}/invitations, the pending ones.
func (a *API) listOrgInvitations(w http.ResponseWriter, r *http.Request) error {
	o, page, err := a.orgPage(r)
	if err != nil {
		return err
	}
	is, next, err := a.iam.ListOrgInvitations(r.Context(), o.ID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(is, next, invitationOut))
	return nil
}

// revokeInvitation: DELETE …/org/{org}/invitations/{invitation}.
func (a *API) revokeInvitation(w http.ResponseWriter, r *http.Request) error {
	if _, err := a.org(r); err != nil {
		return err
	}
	if err := a.iam.RevokeInvitation(r.Context(), access(r), r.PathValue("invitation")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listInvitations: GET /api/v1/invitations, the caller's pending ones.
func (a *API) listInvitations(w http.ResponseWriter, r *http.Request) error {
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	is, next, err := a.iam.MyInvitations(r.Context(), identity(r), page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(is, next, invitationOut))
	return nil
}

// acceptInvitation: POST /api/v1/invitations/{invitation}/accept.
func (a *API) acceptInvitation(w http.ResponseWriter, r *http.Request) error {
	m, err := a.iam.AcceptInvitation(r.Context(), identity(r), r.PathValue("invitation"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, orgMemberOut(m))
	return nil
}

// declineInvitation: POST /api/v1/invitations/{invitation}/decline.
func (a *API) declineInvitation(w http.ResponseWriter, r *http.Request) error {
	inv, err := a.iam.DeclineInvitation(r.Context(), identity(r), r.PathValue("invitation"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, invitationOut(inv))
	return nil
}
