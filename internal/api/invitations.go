package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Invitations. An org admin who adds someone by email or wallet address
// invites whoever holds it: no user is made, and the answer is the same
// whether or not a user has the address, so an org's admins learn nothing
// about who else uses the installation. The user holding the address
// accepts (and becomes a member with the invited role, capped by the
// inviter's role then) or declines; the org's admins list and revoke. An
// invitation to an address no user has waits until the installation admin
// makes that user, or until it expires.

// DefaultInvitationTTL is how long an invitation stays open unless the
// installation says otherwise.
const DefaultInvitationTTL = 7 * 24 * time.Hour

// MaxPendingInvitations bounds an org's pending invitations: past it an
// admin revokes some, or waits for them to expire, before inviting more.
const MaxPendingInvitations = 1000

var (
	errInvitationVoid = errdefs.Conflict("invitation_void",
		"whoever invited you is no longer an admin of the org, so the invitation no longer holds; ask for a new one")
	errInvitationExpired = errdefs.Conflict("invitation_expired", "the invitation has expired; ask for a new one")
)

func errInvitationNotFound(id string) error {
	return errdefs.NotFound("invitation_not_found", "no invitation %q", id)
}

// invitationOut renders inv; org and inviter are its org's name and its
// inviter's handle.
func (a *API) invitationOut(inv store.Invitation, org, inviter string) client.Invitation {
	return client.Invitation{
		ID: inv.ID, OrgID: inv.OrgID, Org: org, Email: inv.Email, Wallet: inv.Wallet, Role: inv.Role,
		InvitedBy: inv.InviterID, Inviter: inviter, State: inv.StateAt(a.now()),
		CreatedAt: inv.CreatedAt, ExpiresAt: inv.ExpiresAt, DecidedAt: timePtr(inv.DecidedAt),
	}
}

// writeInvitations answers 200 with a page of invitations.
func (a *API) writeInvitations(ctx context.Context, w http.ResponseWriter, is []store.Invitation, next string) error {
	out, err := a.invitationsOut(ctx, is, next)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// invitationsOut renders a page of invitations with their orgs' names and
// their inviters' handles.
func (a *API) invitationsOut(ctx context.Context, is []store.Invitation, next string) (client.List[client.Invitation], error) {
	out := client.List[client.Invitation]{Items: make([]client.Invitation, 0, len(is)), NextCursor: next}
	orgs, inviters := map[string]string{}, map[string]string{}
	for _, inv := range is {
		if _, ok := orgs[inv.OrgID]; !ok {
			o, err := a.store.GetOrg(ctx, inv.OrgID)
			if err != nil {
				return out, err
			}
			orgs[inv.OrgID] = o.Name
		}
		if _, ok := inviters[inv.InviterID]; !ok {
			u, err := a.store.GetUser(ctx, inv.InviterID)
			if err != nil {
				return out, err
			}
			inviters[inv.InviterID] = u.Handle()
		}
		out.Items = append(out.Items, a.invitationOut(inv, orgs[inv.OrgID], inviters[inv.InviterID]))
	}
	return out, nil
}

// address reads an email or a wallet address, the two things an org
// invites by.
func address(handle string) (email, wallet string, err error) {
	switch {
	case strings.Contains(handle, "@"):
		email, err = normEmail(handle)
	case strings.HasPrefix(handle, "0x") || strings.HasPrefix(handle, "0X"):
		wallet, err = normWallet(handle)
	default:
		err = errdefs.InvalidArgument("invalid_member", "%q is not an email address or a wallet address", handle)
	}
	return email, wallet, err
}

// invite answers an org admin's add of the address handle with role: an
// invitation (202), or, where the installation allows direct adds, the
// membership of the user who has the address (201).
func (a *API) invite(w http.ResponseWriter, r *http.Request, o store.Org, handle string, role auth.Role) error {
	ctx := r.Context()
	id := identity(r)
	email, wallet, err := address(handle)
	if err != nil {
		return err
	}
	if id.UserID == "" {
		return errdefs.PermissionDenied("inviter_has_no_user", "an invitation needs a user who invites: use a member's key or sign in")
	}
	u, err := a.userByHandle(ctx, handle, false)
	switch {
	case err == nil:
		_, err = a.store.GetOrgMember(ctx, o.ID, u.ID)
		if err == nil {
			return errdefs.Conflict("member_exists", "%s is already a member of org %q", handle, o.Name)
		}
		if !errdefs.IsNotFound(err) {
			return err
		}
		if a.members.DirectAdd {
			return a.addDirectly(w, r, o, u, role)
		}
	case !errdefs.IsNotFound(err):
		return err
	}
	now := a.now()
	inv := store.Invitation{
		ID: uuid.NewString(), OrgID: o.ID, Email: email, Wallet: wallet, Role: string(role),
		InviterID: id.UserID, State: store.InvitationPending, CreatedAt: now, ExpiresAt: now.Add(a.members.InvitationTTL),
	}
	err = a.store.InTx(ctx, func(q store.Queries) error {
		n, err := q.CountPendingInvitations(ctx, o.ID, now)
		if err != nil {
			return err
		}
		if n >= MaxPendingInvitations {
			return errdefs.ResourceExhausted("too_many_invitations",
				"org %q has %d pending invitations, its most: revoke some, or wait for them to expire", o.Name, n)
		}
		return q.CreateInvitation(ctx, inv)
	})
	if err != nil {
		return err
	}
	inviter, err := a.store.GetUser(ctx, id.UserID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, a.invitationOut(inv, o.Name, inviter.Handle()))
	return nil
}

// addDirectly makes u a member of o with role (201).
func (a *API) addDirectly(w http.ResponseWriter, r *http.Request, o store.Org, u store.User, role auth.Role) error {
	m := store.OrgMember{ID: uuid.NewString(), OrgID: o.ID, UserID: u.ID, Role: string(role), CreatedAt: a.now(), User: u}
	if err := a.store.AddOrgMember(r.Context(), m); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, orgMemberOut(m))
	return nil
}

// listOrgInvitations: GET …/org/{org}/invitations, the pending ones.
func (a *API) listOrgInvitations(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	o, page, err := a.orgPage(r)
	if err != nil {
		return err
	}
	is, next, err := a.store.ListInvitations(ctx, store.InvitationFilter{OrgID: o.ID, PendingAt: a.now()}, page)
	if err != nil {
		return listError(err)
	}
	return a.writeInvitations(ctx, w, is, next)
}

// revokeInvitation: DELETE …/org/{org}/invitations/{invitation}. One to the
// owner role is an owner's to revoke.
func (a *API) revokeInvitation(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	o, err := a.org(r)
	if err != nil {
		return err
	}
	id := r.PathValue("invitation")
	inv, err := a.store.GetInvitation(ctx, id)
	if errdefs.IsNotFound(err) || (err == nil && inv.OrgID != o.ID) {
		return errInvitationNotFound(id)
	}
	if err != nil {
		return err
	}
	// Only an owner touches an owner, offered ones too.
	if err := mayManage(access(r), auth.Role(inv.Role), ""); err != nil {
		return err
	}
	if err := a.decide(ctx, inv, store.InvitationRevoked); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// stillOpen refuses an invitation that is no longer pending at now.
func stillOpen(inv store.Invitation, now time.Time) error {
	switch inv.StateAt(now) {
	case store.InvitationPending:
		return nil
	case store.InvitationExpired:
		return errInvitationExpired
	}
	return errdefs.Conflict("invitation_decided", "the invitation was already %s", inv.State)
}

// decide moves inv to state, unless it has expired or been decided.
func (a *API) decide(ctx context.Context, inv store.Invitation, state string) error {
	now := a.now()
	if err := stillOpen(inv, now); err != nil {
		return err
	}
	return a.store.DecideInvitation(ctx, inv.ID, state, now)
}

// invitee is the caller's user, whom invitations to its email or wallet
// address are for. A key narrowed to a workspace speaks for its user in
// that workspace only, and one someone else made for its user in its org
// only, so they see none (ok false).
func (a *API) invitee(r *http.Request) (u store.User, ok bool, err error) {
	id, own, err := a.ownUser(r, "invitations")
	if err != nil || !own || id.WorkspaceID != "" {
		return u, false, err
	}
	u, err = a.store.GetUser(r.Context(), id.UserID)
	return u, err == nil && (u.Email != "" || u.Wallet != ""), err
}

// myInvitation is the caller's invitation {invitation}: any other is not
// found, as a missing one.
func (a *API) myInvitation(r *http.Request) (store.User, store.Invitation, error) {
	id := r.PathValue("invitation")
	u, ok, err := a.invitee(r)
	if err != nil {
		return u, store.Invitation{}, err
	}
	inv, err := a.store.GetInvitation(r.Context(), id)
	mine := ok && ((inv.Email != "" && inv.Email == u.Email) || (inv.Wallet != "" && inv.Wallet == u.Wallet))
	if errdefs.IsNotFound(err) || (err == nil && !mine) {
		return u, inv, errInvitationNotFound(id)
	}
	return u, inv, err
}

// listInvitations: GET /api/v1/invitations, the caller's pending ones.
func (a *API) listInvitations(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	u, ok, err := a.invitee(r)
	if err != nil {
		return err
	}
	var is []store.Invitation
	next := ""
	if ok {
		f := store.InvitationFilter{Email: u.Email, Wallet: u.Wallet, PendingAt: a.now()}
		if is, next, err = a.store.ListInvitations(ctx, f, page); err != nil {
			return listError(err)
		}
	}
	return a.writeInvitations(ctx, w, is, next)
}

// acceptInvitation: POST /api/v1/invitations/{invitation}/accept. In one
// transaction: the inviter must still be an admin of the org, the role is
// capped by theirs, and the invitation moves to accepted as the membership
// is made.
func (a *API) acceptInvitation(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	u, inv, err := a.myInvitation(r)
	if err != nil {
		return err
	}
	now := a.now()
	if err := stillOpen(inv, now); err != nil {
		return err
	}
	m := store.OrgMember{ID: uuid.NewString(), OrgID: inv.OrgID, UserID: u.ID, CreatedAt: now, User: u}
	err = a.store.InTx(ctx, func(q store.Queries) error {
		inviter, err := q.GetOrgMember(ctx, inv.OrgID, inv.InviterID)
		if errdefs.IsNotFound(err) || (err == nil && !auth.Role(inviter.Role).AtLeast(auth.RoleAdmin)) {
			return errInvitationVoid
		}
		if err != nil {
			return err
		}
		m.Role = string(auth.MinRole(auth.Role(inv.Role), auth.Role(inviter.Role)))
		if err := q.DecideInvitation(ctx, inv.ID, store.InvitationAccepted, now); err != nil {
			return err
		}
		return q.AddOrgMember(ctx, m)
	})
	if err == errInvitationVoid {
		// Record it, so that it leaves the org's pending list; the
		// answer is the void either way.
		if err := a.store.DecideInvitation(ctx, inv.ID, store.InvitationRevoked, now); err != nil && !errdefs.IsConflict(err) {
			a.logger.WarnContext(ctx, "record a void invitation", "invitation", inv.ID, "err", err)
		}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, orgMemberOut(m))
	return nil
}

// declineInvitation: POST /api/v1/invitations/{invitation}/decline.
func (a *API) declineInvitation(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	_, inv, err := a.myInvitation(r)
	if err != nil {
		return err
	}
	if err := a.decide(ctx, inv, store.InvitationDeclined); err != nil {
		return err
	}
	inv, err = a.store.GetInvitation(ctx, inv.ID)
	if err != nil {
		return err
	}
	out, err := a.invitationsOut(ctx, []store.Invitation{inv}, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out.Items[0])
	return nil
}
