package api

import (
	"context"
	"errors"
	"net/http"
	"regexp"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Org members and their roles. An admin invites (invitations.go), changes
// and removes members up to admin; only an owner grants owner or touches
// an owner; an org keeps at least one owner once it has one. An admin who
// leaves or is no longer one takes their pending invitations along.

func orgMemberOut(m store.OrgMember) client.OrgMember {
	return client.OrgMember{ID: m.ID, OrgID: m.OrgID, UserID: m.UserID, Member: m.User.Handle(), Role: m.Role, User: userOut(m.User), CreatedAt: m.CreatedAt}
}

// mayManage refuses a role change the caller may not make: granting or
// taking away owner needs an owner.
func mayManage(acc auth.Access, from, to auth.Role) error {
	if (from == auth.RoleOwner || to == auth.RoleOwner) && !acc.Role.AtLeast(auth.RoleOwner) {
		return errdefs.PermissionDenied("owner_only", "only an owner grants the owner role or changes an owner")
	}
	return nil
}

// orgMemberOf resolves {member} to a member of the request's org.
func (a *API) orgMemberOf(r *http.Request) (store.OrgMember, error) {
	ctx := r.Context()
	o, err := a.org(r)
	if err != nil {
		return store.OrgMember{}, err
	}
	handle := r.PathValue("member")
	u, err := a.memberOrNamed(ctx, o.ID, handle)
	if err != nil {
		return store.OrgMember{}, err
	}
	m, err := a.store.GetOrgMember(ctx, o.ID, u.ID)
	if errdefs.IsNotFound(err) {
		return m, errMemberNotFound(handle, o.Name)
	}
	m.User = u
	return m, err
}

// nameRE is the shape of the names that workspace member labels were
// (users migrated from them keep it as their name).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,253}$`)

// memberOrNamed finds the user a handle names (a user id, an email or a
// wallet address), or else the one member of the org with that name. A
// handle that names nobody is member_not_found, whether or not such a user
// exists elsewhere.
func (a *API) memberOrNamed(ctx context.Context, orgID, handle string) (store.User, error) {
	u, err := a.userByHandle(ctx, handle, false)
	if err == nil || !(errdefs.IsNotFound(err) || errors.Is(err, errdefs.ErrInvalidArgument)) {
		return u, err
	}
	if !nameRE.MatchString(handle) {
		return store.User{}, errdefs.InvalidArgument("invalid_member", "%q is not a user id, an email address, a wallet address or a member's name", handle)
	}
	return a.memberByName(ctx, orgID, handle)
}

// errMemberNotFound is every answer about someone who is not a member.
func errMemberNotFound(handle, org string) error {
	return errdefs.NotFound("member_not_found", "%q is not a member of org %q", handle, org)
}

// memberByName finds the one member of an org whose name is name: users
// migrated from name labels have nothing else.
func (a *API) memberByName(ctx context.Context, orgID, name string) (store.User, error) {
	page := store.Page{Limit: store.MaxLimit}
	var found []store.User
	for {
		ms, next, err := a.store.ListOrgMembers(ctx, orgID, page)
		if err != nil {
			return store.User{}, err
		}
		for _, m := range ms {
			if m.User.Name == name && m.User.Email == "" && m.User.Wallet == "" {
				found = append(found, m.User)
			}
		}
		if next == "" {
			break
		}
		page.Cursor = next
	}
	if len(found) != 1 {
		return store.User{}, errdefs.NotFound("member_not_found", "%q is not a member", name)
	}
	return found[0], nil
}

func (a *API) listOrgMembers(w http.ResponseWriter, r *http.Request) error {
	o, page, err := a.orgPage(r)
	if err != nil {
		return err
	}
	ms, next, err := a.store.ListOrgMembers(r.Context(), o.ID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(ms, next, orgMemberOut))
	return nil
}

// addOrgMember: POST …/org/{org}/members. An org admin invites (see
// invitations.go); the installation admin adds directly, and makes a user
// of an address no user has yet.
func (a *API) addOrgMember(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	o, err := a.org(r)
	if err != nil {
		return err
	}
	var req client.AddOrgMemberRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	if req.Role == "" {
		req.Role = string(auth.RoleMember)
	}
	role, err := auth.ParseRole(req.Role)
	if err != nil {
		return err
	}
	if err := mayManage(access(r), "", role); err != nil {
		return err
	}
	if !identity(r).Installation {
		// A user id names a user of the whole installation: an org
		// invites people by an address it knows.
		if isUUID(req.Member) {
			return errdefs.InvalidArgument("invalid_member", "add a member by email or wallet address")
		}
		return a.invite(w, r, o, req.Member, role)
	}
	u, err := a.userByHandle(ctx, req.Member, true)
	if err != nil {
		return err
	}
	return a.addDirectly(w, r, o, u, role)
}

func (a *API) setOrgMemberRole(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var req client.SetRoleRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	role, err := auth.ParseRole(req.Role)
	if err != nil {
		return err
	}
	m, err := a.orgMemberOf(r)
	if err != nil {
		return err
	}
	if err := mayManage(access(r), auth.Role(m.Role), role); err != nil {
		return err
	}
	err = a.keepingAnOwner(ctx, m.OrgID, m.Role == string(auth.RoleOwner) && role != auth.RoleOwner, func(q store.Queries) error {
		if err := q.SetOrgMemberRole(ctx, m.OrgID, m.UserID, string(role)); err != nil {
			return err
		}
		if role.AtLeast(auth.RoleAdmin) {
			return nil
		}
		// No longer an admin: what they offered is void.
		_, err := q.RevokeInvitationsBy(ctx, m.OrgID, m.UserID, a.now())
		return err
	})
	if err != nil {
		return err
	}
	if !role.AtLeast(auth.RoleMember) {
		// A viewer operates nothing: its open streams end.
		a.live.endMember(m.OrgID, m.UserID)
	}
	m.Role = string(role)
	writeJSON(w, http.StatusOK, orgMemberOut(m))
	return nil
}

func (a *API) removeOrgMember(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	m, err := a.orgMemberOf(r)
	if err != nil {
		return err
	}
	if err := mayManage(access(r), auth.Role(m.Role), ""); err != nil {
		return err
	}
	err = a.keepingAnOwner(ctx, m.OrgID, m.Role == string(auth.RoleOwner), func(q store.Queries) error {
		if err := q.RemoveOrgMember(ctx, m.OrgID, m.UserID, a.now()); err != nil {
			return err
		}
		_, err := q.RevokeInvitationsBy(ctx, m.OrgID, m.UserID, a.now())
		return err
	})
	if err != nil {
		return err
	}
	a.live.endMember(m.OrgID, m.UserID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// keepingAnOwner runs change, which takes away an owner when losesOwner,
// in one transaction that first refuses to take away the org's last one:
// two owners demoting each other at once leave one.
func (a *API) keepingAnOwner(ctx context.Context, orgID string, losesOwner bool, change func(q store.Queries) error) error {
	return a.store.InTx(ctx, func(q store.Queries) error {
		if losesOwner {
			n, err := q.CountOrgOwners(ctx, orgID)
			if err != nil {
				return err
			}
			if n <= 1 {
				return errdefs.Conflict("last_owner", "this is the org's last owner; make another owner first")
			}
		}
		return change(q)
	})
}
