package sqlite

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Identity: users, org memberships and wallet sign-ins. (Keys are in
// apikey.go, workspace memberships in seats.go.) Emails and wallets are
// stored lowercase and looked up lowercased.

func toUser(u litedb.User) store.User {
	return store.User{
		ID: u.ID, Email: fromOptString(u.Email), Wallet: fromOptString(u.Wallet),
		Name: u.Name, CreatedAt: fromMicro(u.CreatedAt),
	}
}

// CreateUser inserts u. Its email and wallet are each unique.
func (q *queries) CreateUser(ctx context.Context, u store.User) error {
	u, err := dialect.CheckUser(u)
	if err != nil {
		return err
	}
	err = q.wq.CreateUser(ctx, litedb.CreateUserParams{
		ID: u.ID, Email: optString(u.Email), Wallet: optString(u.Wallet), Name: u.Name, CreatedAt: micros(orNow(u.CreatedAt)),
	})
	return q.userConflict(ctx, u, classify("create user", resUser, err))
}

// userConflict names what another user already has after a write of u
// failed with err: email_taken or wallet_taken. Any other error, and a
// conflict on the id, is returned as it is.
func (q *queries) userConflict(ctx context.Context, u store.User, err error) error {
	if !errdefs.IsConflict(err) {
		return err
	}
	// A failed look-up leaves the conflict as it was.
	if u.Email != "" {
		if taken, lookErr := q.wq.EmailTaken(ctx, litedb.EmailTakenParams{Email: u.Email, ID: u.ID}); lookErr == nil && taken {
			return dialect.EmailTaken(err)
		}
	}
	if u.Wallet != "" {
		if taken, lookErr := q.wq.WalletTaken(ctx, litedb.WalletTakenParams{Wallet: u.Wallet, ID: u.ID}); lookErr == nil && taken {
			return dialect.WalletTaken(err)
		}
	}
	return err
}

// GetUser returns the user with id.
func (q *queries) GetUser(ctx context.Context, id string) (store.User, error) {
	u, err := q.rq.GetUser(ctx, id)
	return toUser(u), classify("get user", resUser, err)
}

// GetUserByEmail returns the user whose email is email.
func (q *queries) GetUserByEmail(ctx context.Context, email string) (store.User, error) {
	u, err := q.rq.GetUserByEmail(ctx, strings.ToLower(email))
	return toUser(u), classify("get user by email", resUser, err)
}

// GetUserByWallet returns the user whose wallet is wallet.
func (q *queries) GetUserByWallet(ctx context.Context, wallet string) (store.User, error) {
	u, err := q.rq.GetUserByWallet(ctx, strings.ToLower(wallet))
	return toUser(u), classify("get user by wallet", resUser, err)
}

// ListUsers lists every user in creation order.
func (q *queries) ListUsers(ctx context.Context, page store.Page) ([]store.User, string, error) {
	return listPage(ctx, "list users", resUser, page,
		func(ctx context.Context, k keyset) ([]litedb.User, error) {
			return q.rq.ListUsers(ctx, litedb.ListUsersParams{AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		total(toUser), func(u store.User) (time.Time, string) { return u.CreatedAt, u.ID })
}

// UpdateUser writes u's email, wallet and name; never its CreatedAt.
func (q *queries) UpdateUser(ctx context.Context, u store.User) error {
	u, err := dialect.CheckUser(u)
	if err != nil {
		return err
	}
	return q.atomic(ctx, func(q *queries) error {
		// A session proved the wallet it was opened with: a new wallet
		// (or none) ends them.
		err := q.wq.EndUserSessionsOnNewWallet(ctx, litedb.EndUserSessionsOnNewWalletParams{
			RevokedAt: micros(time.Now()), UserID: u.ID, Wallet: optString(u.Wallet),
		})
		if err != nil {
			return classify("end the sessions of a user", resAuthSession, err)
		}
		n, err := q.wq.UpdateUser(ctx, litedb.UpdateUserParams{
			ID: u.ID, Email: optString(u.Email), Wallet: optString(u.Wallet), Name: u.Name,
		})
		if err != nil {
			return q.userConflict(ctx, u, classify("update user", resUser, err))
		}
		return affected("update user", resUser, n, nil)
	})
}

// DeleteUser deletes the user with id; its memberships, keys, sessions,
// SSH keys and invitations go with it (ON DELETE CASCADE).
func (q *queries) DeleteUser(ctx context.Context, id string) error {
	n, err := q.wq.DeleteUser(ctx, id)
	if err != nil {
		err = classify("delete user", resUser, err)
		if errors.Is(err, errdefs.ErrFailedPrecondition) {
			return errdefs.FailedPrecondition("user_in_use", "the user is still referenced by other records; delete them first").WithCause(err)
		}
		return err
	}
	return affected("delete user", resUser, n, nil)
}

func toOrgMember(m litedb.OrgMember) store.OrgMember {
	return store.OrgMember{ID: m.ID, OrgID: m.OrgID, UserID: m.UserID, Role: m.Role, CreatedAt: fromMicro(m.CreatedAt)}
}

// toOrgMemberUser maps a membership with its user.
func toOrgMemberUser(m litedb.OrgMember, u litedb.User) store.OrgMember {
	out := toOrgMember(m)
	out.User = toUser(u)
	return out
}

// AddOrgMember inserts m; a user is a member of an org once.
func (q *queries) AddOrgMember(ctx context.Context, m store.OrgMember) error {
	err := required(resOrgMember, "id", m.ID, "org id", m.OrgID, "user id", m.UserID, "role", m.Role)
	if err != nil {
		return err
	}
	err = classify("add org member", resOrgMember, q.wq.AddOrgMember(ctx, litedb.AddOrgMemberParams{
		ID: m.ID, OrgID: m.OrgID, UserID: m.UserID, Role: m.Role, CreatedAt: micros(orNow(m.CreatedAt)),
	}))
	if errdefs.IsConflict(err) {
		return dialect.MemberExists(err)
	}
	return err
}

// GetOrgMember returns userID's membership of orgID, with its User.
func (q *queries) GetOrgMember(ctx context.Context, orgID, userID string) (store.OrgMember, error) {
	r, err := q.rq.GetOrgMember(ctx, litedb.GetOrgMemberParams{OrgID: orgID, UserID: userID})
	if err != nil {
		return store.OrgMember{}, classify("get org member", resOrgMember, err)
	}
	return toOrgMemberUser(r.OrgMember, r.User), nil
}

// ListOrgMembers lists the members of orgID, with their users, in the
// order they joined.
func (q *queries) ListOrgMembers(ctx context.Context, orgID string, page store.Page) ([]store.OrgMember, string, error) {
	return listPage(ctx, "list org members", resOrgMember, page,
		func(ctx context.Context, k keyset) ([]litedb.ListOrgMembersRow, error) {
			return q.rq.ListOrgMembers(ctx, litedb.ListOrgMembersParams{OrgID: orgID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		total(func(r litedb.ListOrgMembersRow) store.OrgMember { return toOrgMemberUser(r.OrgMember, r.User) }),
		func(m store.OrgMember) (time.Time, string) { return m.CreatedAt, m.ID })
}

// ListUserOrgs lists the memberships of userID in the order it joined.
func (q *queries) ListUserOrgs(ctx context.Context, userID string) ([]store.OrgMember, error) {
	rows, err := q.rq.ListUserOrgs(ctx, userID)
	if err != nil {
		return nil, classify("list user orgs", resOrgMember, err)
	}
	return mapRows(rows, total(toOrgMember))
}

// SetOrgMemberRole sets the role of userID in orgID.
func (q *queries) SetOrgMemberRole(ctx context.Context, orgID, userID, role string) error {
	if err := required(resOrgMember, "role", role); err != nil {
		return err
	}
	n, err := q.wq.SetOrgMemberRole(ctx, litedb.SetOrgMemberRoleParams{Role: role, OrgID: orgID, UserID: userID})
	return affected("set org member role", resOrgMember, n, err)
}

// RemoveOrgMember deletes userID's membership of orgID and its workspace
// memberships there, and revokes its keys there (and those it made for
// others) at at (zero: now), in one transaction.
func (q *queries) RemoveOrgMember(ctx context.Context, orgID, userID string, at time.Time) error {
	at = orNow(at)
	return q.atomic(ctx, func(q *queries) error {
		n, err := q.wq.RemoveOrgMember(ctx, litedb.RemoveOrgMemberParams{OrgID: orgID, UserID: userID})
		if err := affected("remove org member", resOrgMember, n, err); err != nil {
			return err
		}
		err = q.wq.RemoveOrgWorkspaceMemberships(ctx, litedb.RemoveOrgWorkspaceMembershipsParams{UserID: userID, OrgID: orgID})
		if err != nil {
			return classify("remove workspace memberships of an org member", resMember, err)
		}
		err = q.wq.RevokeOrgMemberKeys(ctx, litedb.RevokeOrgMemberKeysParams{RevokedAt: micros(at), OrgID: orgID, UserID: userID})
		return classify("revoke the keys of an org member", resAPIKey, err)
	})
}

// CountOrgOwners counts the owners of orgID.
func (q *queries) CountOrgOwners(ctx context.Context, orgID string) (int, error) {
	n, err := q.rq.CountOrgOwners(ctx, orgID)
	return int(n), classify("count org owners", resOrgMember, err)
}

// IsWorkspaceMember reports whether userID is a member of workspaceID.
func (q *queries) IsWorkspaceMember(ctx context.Context, workspaceID, userID string) (bool, error) {
	ok, err := q.rq.IsWorkspaceMember(ctx, litedb.IsWorkspaceMemberParams{WorkspaceID: workspaceID, UserID: userID})
	return ok, classify("check workspace member", resMember, err)
}

// ListMemberWorkspaces lists the ids of orgID's workspaces userID is a
// member of, in the order it joined them. None is an empty slice, never
// nil, so it can narrow a SandboxFilter as it is.
func (q *queries) ListMemberWorkspaces(ctx context.Context, orgID, userID string) ([]string, error) {
	ids, err := q.rq.ListMemberWorkspaces(ctx, litedb.ListMemberWorkspacesParams{OrgID: orgID, UserID: userID})
	if err != nil {
		return nil, classify("list member workspaces", resMember, err)
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}

func toAuthChallenge(c litedb.AuthChallenge) store.AuthChallenge {
	return store.AuthChallenge{
		Nonce: c.Nonce, Wallet: c.Wallet, Message: c.Message,
		CreatedAt: fromMicro(c.CreatedAt), ExpiresAt: fromMicro(c.ExpiresAt),
	}
}

// CreateAuthChallenge inserts c and deletes the challenges that expired by
// c.CreatedAt (zero: now), in one transaction.
func (q *queries) CreateAuthChallenge(ctx context.Context, c store.AuthChallenge) error {
	if err := dialect.CheckAuthChallenge(c); err != nil {
		return err
	}
	created := micros(orNow(c.CreatedAt))
	return q.atomic(ctx, func(q *queries) error {
		if err := q.wq.DeleteExpiredAuthChallenges(ctx, created); err != nil {
			return classify("delete expired auth challenges", resChallenge, err)
		}
		return classify("create auth challenge", resChallenge, q.wq.CreateAuthChallenge(ctx, litedb.CreateAuthChallengeParams{
			Nonce: c.Nonce, Wallet: strings.ToLower(c.Wallet), Message: c.Message, CreatedAt: created, ExpiresAt: micros(c.ExpiresAt),
		}))
	})
}

// GetAuthChallenge returns the challenge with nonce, expired or not.
func (q *queries) GetAuthChallenge(ctx context.Context, nonce string) (store.AuthChallenge, error) {
	c, err := q.rq.GetAuthChallenge(ctx, nonce)
	return toAuthChallenge(c), classify("get auth challenge", resChallenge, err)
}

// ConsumeAuthChallenge deletes the challenge with nonce if it is still
// valid at at (zero: now). One conditional DELETE, so of concurrent callers
// exactly one deletes the row and the rest find nothing.
func (q *queries) ConsumeAuthChallenge(ctx context.Context, nonce string, at time.Time) error {
	n, err := q.wq.ConsumeAuthChallenge(ctx, litedb.ConsumeAuthChallengeParams{Nonce: nonce, At: micros(orNow(at))})
	return affected("consume auth challenge", resChallenge, n, err)
}

func toAuthSession(s litedb.AuthSession) store.AuthSession {
	return store.AuthSession{
		ID: s.ID, UserID: fromOptString(s.UserID), KeyID: fromOptString(s.KeyID), CreatedAt: fromMicro(s.CreatedAt), ExpiresAt: fromMicro(s.ExpiresAt),
		RevokedAt: fromOptTime(s.RevokedAt),
	}
}

// CreateAuthSession inserts s.
func (q *queries) CreateAuthSession(ctx context.Context, s store.AuthSession) error {
	if err := dialect.CheckAuthSession(s); err != nil {
		return err
	}
	return classify("create auth session", resAuthSession, q.wq.CreateAuthSession(ctx, litedb.CreateAuthSessionParams{
		ID: s.ID, UserID: optString(s.UserID), KeyID: optString(s.KeyID), CreatedAt: micros(orNow(s.CreatedAt)), ExpiresAt: micros(s.ExpiresAt),
		RevokedAt: optTime(s.RevokedAt),
	}))
}

// GetAuthSession returns the session with id, expired or revoked as it may
// be.
func (q *queries) GetAuthSession(ctx context.Context, id string) (store.AuthSession, error) {
	s, err := q.rq.GetAuthSession(ctx, id)
	return toAuthSession(s), classify("get auth session", resAuthSession, err)
}

// RevokeAuthSession marks the session with id revoked at at (zero: now)
// unless it already is.
func (q *queries) RevokeAuthSession(ctx context.Context, id string, at time.Time) error {
	n, err := q.wq.RevokeAuthSession(ctx, litedb.RevokeAuthSessionParams{At: micros(orNow(at)), ID: id})
	return affected("revoke auth session", resAuthSession, n, err)
}
