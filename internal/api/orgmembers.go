package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Org members and their roles: the access service keeps the rules (iam
// members.go): who may grant owner, the last owner, invitations of an
// admin who steps down.

func orgMemberOut(m store.OrgMember) client.OrgMember {
	return client.OrgMember{ID: m.ID, OrgID: m.OrgID, UserID: m.UserID, Member: m.User.Handle(), Role: m.Role, User: userOut(m.User), CreatedAt: m.CreatedAt}
}

func (a *API) listOrgMembers(w http.ResponseWriter, r *http.Request) error {
	o, page, err := a.orgPage(r)
	if err != nil {
		return err
	}
	ms, next, err := a.iam.ListOrgMembers(r.Context(), o.ID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ms, next, orgMemberOut))
	return nil
}

// addOrgMember: POST …/org/{org}/members. An org admin invites (202, see
// invitations.go); the installation admin adds directly (201).
func (a *API) addOrgMember(w http.ResponseWriter, r *http.Request) error {
	if _, err := a.org(r); err != nil {
		return err
	}
	var req client.AddOrgMemberRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	added, err := a.iam.AddOrgMember(r.Context(), identity(r), access(r), req.Member, req.Role)
	if err != nil {
		return err
	}
	if added.Invitation != nil {
		writeJSON(w, http.StatusAccepted, invitationOut(*added.Invitation))
		return nil
	}
	writeJSON(w, http.StatusCreated, orgMemberOut(*added.Member))
	return nil
}

func (a *API) setOrgMemberRole(w http.ResponseWriter, r *http.Request) error {
	var req client.SetRoleRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if _, err := a.org(r); err != nil {
		return err
	}
	m, err := a.iam.SetOrgMemberRole(r.Context(), access(r), r.PathValue("member"), req.Role)
	if err != nil {
		return err
	}
	if !auth.Role(m.Role).AtLeast(auth.RoleMember) {
		// A viewer operates nothing: its open streams end.
		a.live.endMember(m.OrgID, m.UserID)
	}
	writeJSON(w, http.StatusOK, orgMemberOut(m))
	return nil
}

func (a *API) removeOrgMember(w http.ResponseWriter, r *http.Request) error {
	if _, err := a.org(r); err != nil {
		return err
	}
	m, err := a.iam.RemoveOrgMember(r.Context(), access(r), r.PathValue("member"))
	if err != nil {
		return err
	}
	a.live.endMember(m.OrgID, m.UserID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
