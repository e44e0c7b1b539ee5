package access

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Invitations. An org admin who adds someone by email or wallet address
// invites whoever holds it: no user is made, and the answer is the same
// whether or not a user has the address, so an org's admins learn nothing
// about who else uses the installation. The user holding the address
// accepts (and becomes a member with the invited role, capped by the
// inviter's role then) or declines; the org's admins list and revoke. An
// invitation to an address no user has waits until the installation admin
// makes that user, or until it expires.

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

// Invitation is an invitation as its readers see it: with its org's name,
// its inviter's handle and its state now.
type Invitation struct {
	store.Invitation
	Org, Inviter string
	State        string
}

// address reads an email or a wallet address, the two things an org
// invites by.
func address(handle string) (email, wallet string, err error) {
	switch {
	case strings.Contains(handle, "@"):
		email, err = normEmail(handle)
	case isWallet(handle):
		wallet, err = normWallet(handle)
	default:
		err = errdefs.InvalidArgument("invalid_member", "%q is not an email address or a wallet address", handle)
	}
	return email, wallet, err
}

// Invite answers an org admin's add of the address handle to o with role:
// an invitation, or, where the installation allows direct adds, the
// membership of the user who has the address.
func (s *Service) Invite(ctx context.Context, p Principal, o store.Org, handle string, role auth.Role) (Added, error) {
	email, wallet, err := address(handle)
	if err != nil {
		return Added{}, err
	}
	if p.UserID == "" {
		return Added{}, errdefs.PermissionDenied("inviter_has_no_user", "an invitation needs a user who invites: use a member's key or sign in")
	}
	u, err := s.UserByHandle(ctx, handle, false)
	switch {
	case err == nil:
		_, err = s.store.GetOrgMember(ctx, o.ID, u.ID)
		if err == nil {
			return Added{}, errdefs.Conflict("member_exists", "%s is already a member of org %q", handle, o.Name)
		}
		if !errdefs.IsNotFound(err) {
			return Added{}, err
		}
		if s.directAdd {
			return s.addDirectly(ctx, o, u, role)
		}
	case !errdefs.IsNotFound(err):
		return Added{}, err
	}
	now := s.now()
	inv := store.Invitation{
		ID: uuid.NewString(), OrgID: o.ID, Email: email, Wallet: wallet, Role: string(role),
		InviterID: p.UserID, State: store.InvitationPending, CreatedAt: now, ExpiresAt: now.Add(s.invitationTTL),
	}
	err = s.store.InTx(ctx, func(q store.Queries) error {
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
		return Added{}, err
	}
	out, err := s.invitations(ctx, []store.Invitation{inv})
	if err != nil {
		return Added{}, err
	}
	return Added{Invitation: &out[0]}, nil
}

// invitations renders invitations with their orgs' names and their
// inviters' handles.
func (s *Service) invitations(ctx context.Context, is []store.Invitation) ([]Invitation, error) {
	out := make([]Invitation, 0, len(is))
	orgs, inviters := map[string]string{}, map[string]string{}
	now := s.now()
	for _, inv := range is {
		if _, ok := orgs[inv.OrgID]; !ok {
			o, err := s.store.GetOrg(ctx, inv.OrgID)
			if err != nil {
				return out, err
			}
			orgs[inv.OrgID] = o.Name
		}
		if _, ok := inviters[inv.InviterID]; !ok {
			u, err := s.store.GetUser(ctx, inv.InviterID)
			if err != nil {
				return out, err
			}
			inviters[inv.InviterID] = u.Handle()
		}
		out = append(out, Invitation{Invitation: inv, Org: orgs[inv.OrgID], Inviter: inviters[inv.InviterID], State: inv.StateAt(now)})
	}
	return out, nil
}

// ListOrgInvitations lists a page of an org's pending invitations.
func (s *Service) ListOrgInvitations(ctx context.Context, orgID string, page store.Page) ([]Invitation, string, error) {
	is, next, err := s.store.ListInvitations(ctx, store.InvitationFilter{OrgID: orgID, PendingAt: s.now()}, page)
	if err != nil {
		return nil, "", err
	}
	out, err := s.invitations(ctx, is)
	return out, next, err
}

// RevokeInvitation revokes invitation id of the org acc is of. One to the
// owner role is an owner's to revoke.
func (s *Service) RevokeInvitation(ctx context.Context, acc auth.Access, id string) error {
	inv, err := s.store.GetInvitation(ctx, id)
	if errdefs.IsNotFound(err) || (err == nil && inv.OrgID != acc.Org.ID) {
		return errInvitationNotFound(id)
	}
	if err != nil {
		return err
	}
	// Only an owner touches an owner, offered ones too.
	if err := mayManage(acc, auth.Role(inv.Role), ""); err != nil {
		return err
	}
	return s.decide(ctx, inv, store.InvitationRevoked)
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
func (s *Service) decide(ctx context.Context, inv store.Invitation, state string) error {
	now := s.now()
	if err := stillOpen(inv, now); err != nil {
		return err
	}
	return s.store.DecideInvitation(ctx, inv.ID, state, now)
}

// invitee is p's user, whom invitations to its email or wallet address
// are for. A key narrowed to a workspace speaks for its user in that
// workspace only, and one someone else made for its user in its org only,
// so they see none (ok false).
func (s *Service) invitee(ctx context.Context, p Principal) (u store.User, ok bool, err error) {
	own, err := s.OwnUser(ctx, p, "invitations")
	if err != nil || !own || p.WorkspaceID != "" {
		return u, false, err
	}
	u, err = s.store.GetUser(ctx, p.UserID)
	return u, err == nil && (u.Email != "" || u.Wallet != ""), err
}

// myInvitation is p's invitation id: any other is not found, as a missing
// one.
func (s *Service) myInvitation(ctx context.Context, p Principal, id string) (store.User, store.Invitation, error) {
	u, ok, err := s.invitee(ctx, p)
	if err != nil {
		return u, store.Invitation{}, err
	}
	inv, err := s.store.GetInvitation(ctx, id)
	mine := ok && ((inv.Email != "" && inv.Email == u.Email) || (inv.Wallet != "" && inv.Wallet == u.Wallet))
	if errdefs.IsNotFound(err) || (err == nil && !mine) {
		return u, inv, errInvitationNotFound(id)
	}
	return u, inv, err
}

// MyInvitations lists a page of p's pending invitations.
func (s *Service) MyInvitations(ctx context.Context, p Principal, page store.Page) ([]Invitation, string, error) {
	u, ok, err := s.invitee(ctx, p)
	if err != nil || !ok {
		return []Invitation{}, "", err
	}
	f := store.InvitationFilter{Email: u.Email, Wallet: u.Wallet, PendingAt: s.now()}
	is, next, err := s.store.ListInvitations(ctx, f, page)
	if err != nil {
		return nil, "", err
	}
	out, err := s.invitations(ctx, is)
	return out, next, err
}

// AcceptInvitation accepts p's invitation id. In one transaction: the
// inviter must still be an admin of the org, the role is capped by
// theirs, and the invitation moves to accepted as the membership is made.
func (s *Service) AcceptInvitation(ctx context.Context, p Principal, id string) (store.OrgMember, error) {
	u, inv, err := s.myInvitation(ctx, p, id)
	if err != nil {
		return store.OrgMember{}, err
	}
	now := s.now()
	if err := stillOpen(inv, now); err != nil {
		return store.OrgMember{}, err
	}
	m := store.OrgMember{ID: uuid.NewString(), OrgID: inv.OrgID, UserID: u.ID, CreatedAt: now, User: u}
	err = s.store.InTx(ctx, func(q store.Queries) error {
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
		if err := s.store.DecideInvitation(ctx, inv.ID, store.InvitationRevoked, now); err != nil && !errdefs.IsConflict(err) {
			s.logger.WarnContext(ctx, "record a void invitation", "invitation", inv.ID, "err", err)
		}
	}
	return m, err
}

// DeclineInvitation declines p's invitation id.
func (s *Service) DeclineInvitation(ctx context.Context, p Principal, id string) (Invitation, error) {
	_, inv, err := s.myInvitation(ctx, p, id)
	if err != nil {
		return Invitation{}, err
	}
	if err := s.decide(ctx, inv, store.InvitationDeclined); err != nil {
		return Invitation{}, err
	}
	if inv, err = s.store.GetInvitation(ctx, inv.ID); err != nil {
		return Invitation{}, err
	}
	out, err := s.invitations(ctx, []store.Invitation{inv})
	if err != nil {
		return Invitation{}, err
	}
	return out[0], nil
}
