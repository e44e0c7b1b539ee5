package access

import (
	"context"
	"errors"
	"regexp"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Org members and their roles. An admin invites (invitations.go), changes
// and removes members up to admin; only an owner grants owner or touches
// an owner; an org keeps at least one owner once it has one. An admin who
// leaves or is no longer one takes their pending invitations along.

// mayManage refuses a role change the caller may not make: granting or
// taking away owner needs an owner.
func mayManage(acc auth.Access, from, to auth.Role) error {
	if (from == auth.RoleOwner || to == auth.RoleOwner) && !acc.Role.AtLeast(auth.RoleOwner) {
		return errdefs.PermissionDenied("owner_only", "only an owner grants the owner role or changes an owner")
	}
	return nil
}

// nameRE is the shape of the names that workspace member labels were
// (users migrated from them keep it as their name).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,253}$`)

// ErrMemberNotFound is every answer about someone who is not a member.
func ErrMemberNotFound(handle, org string) error {
	return errdefs.NotFound("member_not_found", "%q is not a member of org %q", handle, org)
}

// MemberOrNamed finds the user a handle names (a user id, an email or a
// wallet address), or else the one member of the org with that name. A
// handle that names nobody is member_not_found, whether or not such a user
// exists elsewhere.
func (s *Service) MemberOrNamed(ctx context.Context, orgID, handle string) (store.User, error) {
	u, err := s.UserByHandle(ctx, handle, false)
	if err == nil || !(errdefs.IsNotFound(err) || errors.Is(err, errdefs.ErrInvalidArgument)) {
		return u, err
	}
	if !nameRE.MatchString(handle) {
		return store.User{}, errdefs.InvalidArgument("invalid_member", "%q is not a user id, an email address, a wallet address or a member's name", handle)
	}
	return s.memberByName(ctx, orgID, handle)
}

// memberByName finds the one member of an org whose name is name: users
// migrated from name labels have nothing else.
func (s *Service) memberByName(ctx context.Context, orgID, name string) (store.User, error) {
	page := store.Page{Limit: store.MaxLimit}
	var found []store.User
	for {
		ms, next, err := s.store.ListOrgMembers(ctx, orgID, page)
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

// OrgMember is the member of org that handle names.
func (s *Service) OrgMember(ctx context.Context, org store.Org, handle string) (store.OrgMember, error) {
	u, err := s.MemberOrNamed(ctx, org.ID, handle)
	if err != nil {
		return store.OrgMember{}, err
	}
	m, err := s.store.GetOrgMember(ctx, org.ID, u.ID)
	if errdefs.IsNotFound(err) {
		return m, ErrMemberNotFound(handle, org.Name)
	}
	m.User = u
	return m, err
}

// ListOrgMembers lists a page of an org's members.
func (s *Service) ListOrgMembers(ctx context.Context, orgID string, page store.Page) ([]store.OrgMember, string, error) {
	return s.store.ListOrgMembers(ctx, orgID, page)
}

// Added is what adding someone to an org did: made a member, or invited
// them.
type Added struct {
	Member     *store.OrgMember
	Invitation *Invitation
}

// AddOrgMember adds handle to the org acc is of, with role ("" for
// member), for p: the installation admin adds directly, and makes a user
// of an address no user has yet; an org admin invites (Invite).
func (s *Service) AddOrgMember(ctx context.Context, p Principal, acc auth.Access, handle, role string) (Added, error) {
	if role == "" {
		role = string(auth.RoleMember)
	}
	r, err := auth.ParseRole(role)
	if err != nil {
		return Added{}, err
	}
	if err := mayManage(acc, "", r); err != nil {
		return Added{}, err
	}
	if !p.Installation {
		// A user id names a user of the whole installation: an org
		// invites people by an address it knows.
		if store.IsID(handle) {
			return Added{}, errdefs.InvalidArgument("invalid_member", "add a member by email or wallet address")
		}
		return s.Invite(ctx, p, acc.Org, handle, r)
	}
	u, err := s.UserByHandle(ctx, handle, true)
	if err != nil {
		return Added{}, err
	}
	return s.addDirectly(ctx, acc.Org, u, r)
}

// addDirectly makes u a member of o with role.
func (s *Service) addDirectly(ctx context.Context, o store.Org, u store.User, role auth.Role) (Added, error) {
	m := store.OrgMember{ID: uuid.NewString(), OrgID: o.ID, UserID: u.ID, Role: string(role), CreatedAt: s.now(), User: u}
	if err := s.store.AddOrgMember(ctx, m); err != nil {
		return Added{}, err
	}
	return Added{Member: &m}, nil
}

// SetOrgMemberRole gives the member handle names role, as one whose
// access is acc. The org keeps an owner; a member who is no longer an
// admin takes their pending invitations along.
func (s *Service) SetOrgMemberRole(ctx context.Context, acc auth.Access, handle, role string) (store.OrgMember, error) {
	r, err := auth.ParseRole(role)
	if err != nil {
		return store.OrgMember{}, err
	}
	m, err := s.OrgMember(ctx, acc.Org, handle)
	if err != nil {
		return m, err
	}
	if err := mayManage(acc, auth.Role(m.Role), r); err != nil {
		return m, err
	}
	err = s.keepingAnOwner(ctx, m.OrgID, m.Role == string(auth.RoleOwner) && r != auth.RoleOwner, func(q memberTx) error {
		if err := q.SetOrgMemberRole(ctx, m.OrgID, m.UserID, string(r)); err != nil {
			return err
		}
		if r.AtLeast(auth.RoleAdmin) {
			return nil
		}
		// No longer an admin: what they offered is void.
		_, err := q.RevokeInvitationsBy(ctx, m.OrgID, m.UserID, s.now())
		return err
	})
	m.Role = string(r)
	return m, err
}

// RemoveOrgMember removes the member handle names, as one whose access is
// acc, with their pending invitations; the org keeps an owner. Their
// credentials die with the membership (memberSince).
func (s *Service) RemoveOrgMember(ctx context.Context, acc auth.Access, handle string) (store.OrgMember, error) {
	m, err := s.OrgMember(ctx, acc.Org, handle)
	if err != nil {
		return m, err
	}
	if err := mayManage(acc, auth.Role(m.Role), ""); err != nil {
		return m, err
	}
	return m, s.keepingAnOwner(ctx, m.OrgID, m.Role == string(auth.RoleOwner), func(q memberTx) error {
		if err := q.RemoveOrgMember(ctx, m.OrgID, m.UserID, s.now()); err != nil {
			return err
		}
		_, err := q.RevokeInvitationsBy(ctx, m.OrgID, m.UserID, s.now())
		return err
	})
}

// keepingAnOwner runs change, which takes away an owner when losesOwner,
// in one transaction that first refuses to take away the org's last one:
// two owners demoting each other at once leave one.
func (s *Service) keepingAnOwner(ctx context.Context, orgID string, losesOwner bool, change func(q memberTx) error) error {
	return s.store.InTx(ctx, func(q store.Queries) error {
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

// WorkspaceJoiner is the user handle names, to add to a workspace of the
// org acc is of, for p. A workspace's members are the org's. Someone who
// is not one joins the org as a member only where no consent is asked:
// the installation admin's add, or an installation that allows direct
// adds; and then by address (a user id names someone of the whole
// installation), not through a key narrowed to a workspace. Anyone else
// is not found alike, whether or not a user has the address.
func (s *Service) WorkspaceJoiner(ctx context.Context, p Principal, acc auth.Access, handle string) (store.User, error) {
	var u store.User
	var err error
	if store.IsID(handle) {
		u, err = s.MemberOrNamed(ctx, acc.Org.ID, handle)
	} else {
		// Only the installation admin makes users.
		u, err = s.UserByHandle(ctx, handle, p.Installation)
	}
	if errdefs.IsNotFound(err) {
		return u, ErrMemberNotFound(handle, acc.Org.Name)
	}
	if err != nil {
		return u, err
	}
	_, err = s.store.GetOrgMember(ctx, acc.Org.ID, u.ID)
	switch {
	case errdefs.IsNotFound(err) && !p.Installation && (store.IsID(handle) || !s.directAdd):
		return u, ErrMemberNotFound(handle, acc.Org.Name)
	case errdefs.IsNotFound(err) && p.WorkspaceID != "":
		return u, errdefs.PermissionDenied("key_narrowed_to_workspace", "this key is narrowed to one workspace; adding someone to the org needs an org-wide key")
	case errdefs.IsNotFound(err):
		om := store.OrgMember{ID: uuid.NewString(), OrgID: acc.Org.ID, UserID: u.ID, Role: string(auth.RoleMember), CreatedAt: s.now()}
		if err := s.store.AddOrgMember(ctx, om); err != nil && !errdefs.IsConflict(err) {
			return u, err
		}
	case err != nil:
		return u, err
	}
	return u, nil
}
