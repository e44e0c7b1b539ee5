package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Identity: users, org memberships, workspace membership checks and wallet
// sign-ins. (Keys are in apikey.go.) Emails and wallets are stored
// lowercase and looked up lowercased.

// resWorkspaceMember names a workspace membership in errors.
const resWorkspaceMember dialect.Resource = "member"

func toUser(u pgdb.User) store.User {
	return store.User{
		ID: u.ID, Email: fromOptString(u.Email), Wallet: fromOptString(u.Wallet),
		Name: u.Name, CreatedAt: u.CreatedAt.UTC(),
	}
}

// userError classifies err from a write of a user, naming what another
// user already has: email_taken or wallet_taken.
func userError(op string, err error) error {
	switch violated(err) {
	case "users_email_key":
		return dialect.EmailTaken(err)
	case "users_wallet_key":
		return dialect.WalletTaken(err)
	}
	return classify(op, dialect.User, err)
}

// CreateUser inserts u. Its email and wallet are each unique.
func (q *queries) CreateUser(ctx context.Context, u store.User) error {
	u, err := dialect.CheckUser(u)
	if err != nil {
		return err
	}
	return userError("create user", q.q.CreateUser(ctx, pgdb.CreateUserParams{
		ID: u.ID, Email: optString(u.Email), Wallet: optString(u.Wallet), Name: u.Name, CreatedAt: orNow(u.CreatedAt),
	}))
}

// GetUser returns the user with id.
func (q *queries) GetUser(ctx context.Context, id string) (store.User, error) {
	u, err := q.q.GetUser(ctx, id)
	return toUser(u), classify("get user", dialect.User, err)
}

// GetUserByEmail returns the user whose email is email.
func (q *queries) GetUserByEmail(ctx context.Context, email string) (store.User, error) {
	u, err := q.q.GetUserByEmail(ctx, optString(strings.ToLower(email)))
	return toUser(u), classify("get user by email", dialect.User, err)
}

// GetUserByWallet returns the user whose wallet is wallet.
func (q *queries) GetUserByWallet(ctx context.Context, wallet string) (store.User, error) {
	u, err := q.q.GetUserByWallet(ctx, optString(strings.ToLower(wallet)))
	return toUser(u), classify("get user by wallet", dialect.User, err)
}

// ListUsers lists every user in creation order.
func (q *queries) ListUsers(ctx context.Context, page store.Page) ([]store.User, string, error) {
	return listPage(ctx, "list users", dialect.User, page,
		func(ctx context.Context, k keyset) ([]pgdb.User, error) {
			return q.q.ListUsers(ctx, pgdb.ListUsersParams{AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toUser, func(u store.User) (time.Time, string) { return u.CreatedAt, u.ID })
}

// UpdateUser writes u's email, wallet and name; never its CreatedAt. It
// locks the user's row first, so a change of wallet and the end of the
// sessions opened with the old one are one step to concurrent writers.
func (q *queries) UpdateUser(ctx context.Context, u store.User) error {
	u, err := dialect.CheckUser(u)
	if err != nil {
		return err
	}
	return q.atomic(ctx, func(q *queries) error {
		old, err := q.q.LockUserWallet(ctx, u.ID)
		if err != nil {
			return classify("update user", dialect.User, err)
		}
		// A session proved the wallet it was opened with: a new wallet
		// (or none) ends them.
		if fromOptString(old) != u.Wallet {
			err := q.q.EndUserSessions(ctx, pgdb.EndUserSessionsParams{RevokedAt: now(), UserID: u.ID})
			if err != nil {
				return classify("end the sessions of a user", dialect.AuthSession, err)
			}
		}
		n, err := q.q.UpdateUser(ctx, pgdb.UpdateUserParams{
			ID: u.ID, Email: optString(u.Email), Wallet: optString(u.Wallet), Name: u.Name,
		})
		if err != nil {
			return userError("update user", err)
		}
		return affected("update user", dialect.User, n, nil)
	})
}

// DeleteUser deletes the user with id; its memberships, keys, sessions,
// SSH keys and invitations go with it (ON DELETE CASCADE).
func (q *queries) DeleteUser(ctx context.Context, id string) error {
	n, err := q.q.DeleteUser(ctx, id)
	if err != nil {
		err = classify("delete user", dialect.User, err)
		if errors.Is(err, errdefs.ErrFailedPrecondition) {
			return errdefs.FailedPrecondition("user_in_use", "the user is still referenced by other records; delete them first").WithCause(err)
		}
		return err
	}
	return affected("delete user", dialect.User, n, nil)
}

// affected is the outcome of a write meant for one record that changed n
// rows: err classified, or not found when it changed none.
func affected(op string, res dialect.Resource, n int64, err error) error {
	if err != nil {
		return classify(op, res, err)
	}
	if n == 0 {
		return dialect.NotFound(res, nil)
	}
	return nil
}

func toOrgMember(m pgdb.OrgMember) store.OrgMember {
	return store.OrgMember{ID: m.ID, OrgID: m.OrgID, UserID: m.UserID, Role: m.Role, CreatedAt: m.CreatedAt.UTC()}
}

// toOrgMemberUser maps a membership with its user.
func toOrgMemberUser(m pgdb.OrgMember, u pgdb.User) store.OrgMember {
	out := toOrgMember(m)
	out.User = toUser(u)
	return out
}

// AddOrgMember inserts m; a user is a member of an org once.
func (q *queries) AddOrgMember(ctx context.Context, m store.OrgMember) error {
	err := dialect.Required(dialect.OrgMember, "id", m.ID, "org id", m.OrgID, "user id", m.UserID, "role", m.Role)
	if err != nil {
		return err
	}
	err = classify("add org member", dialect.OrgMember, q.q.AddOrgMember(ctx, pgdb.AddOrgMemberParams{
		ID: m.ID, OrgID: m.OrgID, UserID: m.UserID, Role: m.Role, CreatedAt: orNow(m.CreatedAt),
	}))
	if errdefs.IsConflict(err) {
		return dialect.MemberExists(err)
	}
	return err
}

// GetOrgMember returns userID's membership of orgID, with its User.
func (q *queries) GetOrgMember(ctx context.Context, orgID, userID string) (store.OrgMember, error) {
	r, err := q.q.GetOrgMember(ctx, pgdb.GetOrgMemberParams{OrgID: orgID, UserID: userID})
	if err != nil {
		return store.OrgMember{}, classify("get org member", dialect.OrgMember, err)
	}
	return toOrgMemberUser(r.OrgMember, r.User), nil
}

// ListOrgMembers lists the members of orgID, with their users, in the
// order they joined.
func (q *queries) ListOrgMembers(ctx context.Context, orgID string, page store.Page) ([]store.OrgMember, string, error) {
	return listPage(ctx, "list org members", dialect.OrgMember, page,
		func(ctx context.Context, k keyset) ([]pgdb.ListOrgMembersRow, error) {
			return q.q.ListOrgMembers(ctx, pgdb.ListOrgMembersParams{OrgID: orgID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		func(r pgdb.ListOrgMembersRow) store.OrgMember { return toOrgMemberUser(r.OrgMember, r.User) },
		func(m store.OrgMember) (time.Time, string) { return m.CreatedAt, m.ID })
}

// ListUserOrgs lists the memberships of userID in the order it joined.
func (q *queries) ListUserOrgs(ctx context.Context, userID string) ([]store.OrgMember, error) {
	rows, err := q.q.ListUserOrgs(ctx, userID)
	if err != nil {
		return nil, classify("list user orgs", dialect.OrgMember, err)
	}
	return mapRows(rows, toOrgMember), nil
}

// SetOrgMemberRole sets the role of userID in orgID.
func (q *queries) SetOrgMemberRole(ctx context.Context, orgID, userID, role string) error {
	if err := dialect.Required(dialect.OrgMember, "role", role); err != nil {
		return err
	}
	n, err := q.q.SetOrgMemberRole(ctx, pgdb.SetOrgMemberRoleParams{Role: role, OrgID: orgID, UserID: userID})
	return affected("set org member role", dialect.OrgMember, n, err)
}

// RemoveOrgMember deletes userID's membership of orgID and its workspace
// memberships there, and revokes its keys there (and those it made for
// others) at at (zero: now), in one transaction.
func (q *queries) RemoveOrgMember(ctx context.Context, orgID, userID string, at time.Time) error {
	at = orNow(at)
	return q.atomic(ctx, func(q *queries) error {
		n, err := q.q.RemoveOrgMember(ctx, pgdb.RemoveOrgMemberParams{OrgID: orgID, UserID: userID})
		if err := affected("remove org member", dialect.OrgMember, n, err); err != nil {
			return err
		}
		err = q.q.RemoveOrgWorkspaceMemberships(ctx, pgdb.RemoveOrgWorkspaceMembershipsParams{UserID: userID, OrgID: orgID})
		if err != nil {
			return classify("remove workspace memberships of an org member", resWorkspaceMember, err)
		}
		err = q.q.RevokeOrgMemberKeys(ctx, pgdb.RevokeOrgMemberKeysParams{RevokedAt: at, OrgID: orgID, UserID: userID})
		return classify("revoke the keys of an org member", dialect.APIKey, err)
	})
}

// CountOrgOwners counts the owners of orgID.
func (q *queries) CountOrgOwners(ctx context.Context, orgID string) (int, error) {
	n, err := q.q.CountOrgOwners(ctx, orgID)
	return int(n), classify("count org owners", dialect.OrgMember, err)
}

// IsWorkspaceMember reports whether userID is a member of workspaceID.
func (q *queries) IsWorkspaceMember(ctx context.Context, workspaceID, userID string) (bool, error) {
	ok, err := q.q.IsWorkspaceMember(ctx, pgdb.IsWorkspaceMemberParams{WorkspaceID: workspaceID, UserID: userID})
	return ok, classify("check workspace member", resWorkspaceMember, err)
}

// ListMemberWorkspaces lists the ids of orgID's workspaces userID is a
// member of, in the order it joined them. None is an empty slice, never
// nil, so it can narrow a SandboxFilter as it is.
func (q *queries) ListMemberWorkspaces(ctx context.Context, orgID, userID string) ([]string, error) {
	ids, err := q.q.ListMemberWorkspaces(ctx, pgdb.ListMemberWorkspacesParams{OrgID: orgID, UserID: userID})
	if err != nil {
		return nil, classify("list member workspaces", resWorkspaceMember, err)
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}

func toAuthChallenge(c pgdb.AuthChallenge) store.AuthChallenge {
	return store.AuthChallenge{
		Nonce: c.Nonce, Wallet: c.Wallet, Message: c.Message,
		CreatedAt: c.CreatedAt.UTC(), ExpiresAt: c.ExpiresAt.UTC(),
	}
}

// CreateAuthChallenge inserts c and deletes the challenges that expired by
// c.CreatedAt (zero: now), in one transaction.
func (q *queries) CreateAuthChallenge(ctx context.Context, c store.AuthChallenge) error {
	if err := dialect.CheckAuthChallenge(c); err != nil {
		return err
	}
	created := orNow(c.CreatedAt)
	return q.atomic(ctx, func(q *queries) error {
		if err := q.q.DeleteExpiredAuthChallenges(ctx, created); err != nil {
			return classify("delete expired auth challenges", dialect.Challenge, err)
		}
		return classify("create auth challenge", dialect.Challenge, q.q.CreateAuthChallenge(ctx, pgdb.CreateAuthChallengeParams{
			Nonce: c.Nonce, Wallet: strings.ToLower(c.Wallet), Message: c.Message, CreatedAt: created, ExpiresAt: stamp(c.ExpiresAt),
		}))
	})
}

// GetAuthChallenge returns the challenge with nonce, expired or not.
func (q *queries) GetAuthChallenge(ctx context.Context, nonce string) (store.AuthChallenge, error) {
	c, err := q.q.GetAuthChallenge(ctx, nonce)
	return toAuthChallenge(c), classify("get auth challenge", dialect.Challenge, err)
}

// ConsumeAuthChallenge deletes the challenge with nonce if it is still
// valid at at (zero: now). One conditional DELETE: of concurrent callers
// the first takes the row lock and deletes the row, and the rest, once it
// commits, find nothing.
func (q *queries) ConsumeAuthChallenge(ctx context.Context, nonce string, at time.Time) error {
	n, err := q.q.ConsumeAuthChallenge(ctx, pgdb.ConsumeAuthChallengeParams{Nonce: nonce, At: orNow(at)})
	return affected("consume auth challenge", dialect.Challenge, n, err)
}

func toAuthSession(s pgdb.AuthSession) store.AuthSession {
	return store.AuthSession{
		ID: s.ID, UserID: fromOptString(s.UserID), KeyID: fromOptString(s.KeyID), CreatedAt: s.CreatedAt.UTC(), ExpiresAt: s.ExpiresAt.UTC(),
		RevokedAt: fromOptTime(s.RevokedAt),
	}
}

// CreateAuthSession inserts s.
func (q *queries) CreateAuthSession(ctx context.Context, s store.AuthSession) error {
	if err := dialect.CheckAuthSession(s); err != nil {
		return err
	}
	return classify("create auth session", dialect.AuthSession, q.q.CreateAuthSession(ctx, pgdb.CreateAuthSessionParams{
		ID: s.ID, UserID: optString(s.UserID), KeyID: optString(s.KeyID), CreatedAt: orNow(s.CreatedAt), ExpiresAt: stamp(s.ExpiresAt), RevokedAt: optTime(s.RevokedAt),
	}))
}

// GetAuthSession returns the session with id, expired or revoked as it may
// be.
func (q *queries) GetAuthSession(ctx context.Context, id string) (store.AuthSession, error) {
	s, err := q.q.GetAuthSession(ctx, id)
	return toAuthSession(s), classify("get auth session", dialect.AuthSession, err)
}

// RevokeAuthSession marks the session with id revoked at at (zero: now)
// unless it already is.
func (q *queries) RevokeAuthSession(ctx context.Context, id string, at time.Time) error {
	n, err := q.q.RevokeAuthSession(ctx, pgdb.RevokeAuthSessionParams{At: orNow(at), ID: id})
	return affected("revoke auth session", dialect.AuthSession, n, err)
}
