package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Identity: users, org memberships and wallet sign-ins. (Keys are in
// apikey.go, workspace memberships in seats.go.) Emails and wallets are
// stored lowercase and looked up lowercased.

const userColumns = "id, email, wallet, name, created_at"

func scanUser(sc rowScanner) (store.User, error) {
	var u store.User
	var email, wallet sql.NullString
	var created int64
	if err := sc.Scan(&u.ID, &email, &wallet, &u.Name, &created); err != nil {
		return store.User{}, err
	}
	u.Email, u.Wallet = email.String, wallet.String
	u.CreatedAt = time.UnixMicro(created).UTC()
	return u, nil
}

// checkUser validates u and lowercases its email and wallet.
func checkUser(u store.User) (store.User, error) {
	if err := required(resUser, "id", u.ID); err != nil {
		return store.User{}, err
	}
	u.Email, u.Wallet = strings.ToLower(u.Email), strings.ToLower(u.Wallet)
	if u.Email == "" && u.Wallet == "" && u.Name == "" {
		return store.User{}, errdefs.InvalidArgument("invalid_user", "a user needs an email address, a wallet or a name")
	}
	return u, nil
}

// CreateUser inserts u. Its email and wallet are each unique.
func (q *queries) CreateUser(ctx context.Context, u store.User) error {
	u, err := checkUser(u)
	if err != nil {
		return err
	}
	_, err = q.w.ExecContext(ctx, "INSERT INTO users ("+userColumns+") VALUES (?, ?, ?, ?, ?)",
		u.ID, nullString(u.Email), nullString(u.Wallet), u.Name, micros(orNow(u.CreatedAt)))
	return q.userConflict(ctx, u, classify("create user", resUser, err))
}

// userConflict names what another user already has after a write of u
// failed with err: email_taken or wallet_taken. Any other error, and a
// conflict on the id, is returned as it is.
func (q *queries) userConflict(ctx context.Context, u store.User, err error) error {
	if !errdefs.IsConflict(err) {
		return err
	}
	for _, c := range []struct{ column, value, code, what string }{
		{"email", u.Email, "email_taken", "email address"},
		{"wallet", u.Wallet, "wallet_taken", "wallet"},
	} {
		if c.value == "" {
			continue
		}
		var taken bool
		row := q.w.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM users WHERE "+c.column+" = ? AND id != ?)", c.value, u.ID)
		if row.Scan(&taken) == nil && taken { // a failed look-up leaves the conflict as it was
			return errdefs.Conflict(c.code, "another user has this %s", c.what).WithCause(err)
		}
	}
	return err
}

// GetUser returns the user with id.
func (q *queries) GetUser(ctx context.Context, id string) (store.User, error) {
	u, err := scanUser(q.r.QueryRowContext(ctx, "SELECT "+userColumns+" FROM users WHERE id = ?", id))
	return u, classify("get user", resUser, err)
}

// GetUserByEmail returns the user whose email is email.
func (q *queries) GetUserByEmail(ctx context.Context, email string) (store.User, error) {
	u, err := scanUser(q.r.QueryRowContext(ctx, "SELECT "+userColumns+" FROM users WHERE email = ?", strings.ToLower(email)))
	return u, classify("get user by email", resUser, err)
}

// GetUserByWallet returns the user whose wallet is wallet.
func (q *queries) GetUserByWallet(ctx context.Context, wallet string) (store.User, error) {
	u, err := scanUser(q.r.QueryRowContext(ctx, "SELECT "+userColumns+" FROM users WHERE wallet = ?", strings.ToLower(wallet)))
	return u, classify("get user by wallet", resUser, err)
}

// ListUsers lists every user in creation order.
func (q *queries) ListUsers(ctx context.Context, page store.Page) ([]store.User, string, error) {
	return listing[store.User]{
		op:   "list users",
		res:  resUser,
		from: "SELECT " + userColumns + " FROM users",
		scan: scanUser,
		key:  func(u store.User) (time.Time, string) { return u.CreatedAt, u.ID },
	}.run(ctx, q.r, page)
}

// UpdateUser writes u's email, wallet and name; never its CreatedAt.
func (q *queries) UpdateUser(ctx context.Context, u store.User) error {
	u, err := checkUser(u)
	if err != nil {
		return err
	}
	return q.atomic(ctx, func(q *queries) error {
		// A session proved the wallet it was opened with: a new wallet
		// (or none) ends them.
		_, err := q.w.ExecContext(ctx, `UPDATE auth_sessions SET revoked_at = ?
			WHERE user_id = ? AND revoked_at IS NULL
			AND (SELECT wallet FROM users WHERE id = ?) IS NOT ?`, micros(time.Now()), u.ID, u.ID, nullString(u.Wallet))
		if err != nil {
			return classify("end the sessions of a user", resAuthSession, err)
		}
		r, err := q.w.ExecContext(ctx, "UPDATE users SET email = ?, wallet = ?, name = ? WHERE id = ?",
			nullString(u.Email), nullString(u.Wallet), u.Name, u.ID)
		if err != nil {
			return q.userConflict(ctx, u, classify("update user", resUser, err))
		}
		if n, err := r.RowsAffected(); err != nil || n == 0 {
			return classify("update user", resUser, orNoRows(err))
		}
		return nil
	})
}

// DeleteUser deletes the user with id; its memberships, keys and sessions
// go with it (ON DELETE CASCADE).
func (q *queries) DeleteUser(ctx context.Context, id string) error {
	return q.deleteByID(ctx, "users", resUser, id)
}

const orgMemberColumns = "id, org_id, user_id, role, created_at"

// orgMembersWithUsers is org_members with each member's user, under names
// the listing helper can use unqualified.
const orgMembersWithUsers = `SELECT ` + orgMemberColumns + `, user_email, user_wallet, user_name, user_created_at FROM (
	SELECT m.id, m.org_id, m.user_id, m.role, m.created_at,
		u.email AS user_email, u.wallet AS user_wallet, u.name AS user_name, u.created_at AS user_created_at
	FROM org_members m JOIN users u ON u.id = m.user_id)`

func scanOrgMember(sc rowScanner) (store.OrgMember, error) {
	var m store.OrgMember
	var created int64
	if err := sc.Scan(&m.ID, &m.OrgID, &m.UserID, &m.Role, &created); err != nil {
		return store.OrgMember{}, err
	}
	m.CreatedAt = time.UnixMicro(created).UTC()
	return m, nil
}

// scanOrgMemberUser scans a row of orgMembersWithUsers.
func scanOrgMemberUser(sc rowScanner) (store.OrgMember, error) {
	var m store.OrgMember
	var created, userCreated int64
	var email, wallet sql.NullString
	if err := sc.Scan(&m.ID, &m.OrgID, &m.UserID, &m.Role, &created,
		&email, &wallet, &m.User.Name, &userCreated); err != nil {
		return store.OrgMember{}, err
	}
	m.CreatedAt = time.UnixMicro(created).UTC()
	m.User.ID, m.User.Email, m.User.Wallet = m.UserID, email.String, wallet.String
	m.User.CreatedAt = time.UnixMicro(userCreated).UTC()
	return m, nil
}

// AddOrgMember inserts m; a user is a member of an org once.
func (q *queries) AddOrgMember(ctx context.Context, m store.OrgMember) error {
	err := required(resOrgMember, "id", m.ID, "org id", m.OrgID, "user id", m.UserID, "role", m.Role)
	if err != nil {
		return err
	}
	_, err = q.w.ExecContext(ctx, "INSERT INTO org_members ("+orgMemberColumns+") VALUES (?, ?, ?, ?, ?)",
		m.ID, m.OrgID, m.UserID, m.Role, micros(orNow(m.CreatedAt)))
	err = classify("add org member", resOrgMember, err)
	if errdefs.IsConflict(err) {
		return errdefs.Conflict("member_exists", "the user is already a member of this org").WithCause(err)
	}
	return err
}

// GetOrgMember returns userID's membership of orgID, with its User.
func (q *queries) GetOrgMember(ctx context.Context, orgID, userID string) (store.OrgMember, error) {
	m, err := scanOrgMemberUser(q.r.QueryRowContext(ctx, orgMembersWithUsers+" WHERE org_id = ? AND user_id = ?", orgID, userID))
	return m, classify("get org member", resOrgMember, err)
}

// ListOrgMembers lists the members of orgID, with their users, in the
// order they joined.
func (q *queries) ListOrgMembers(ctx context.Context, orgID string, page store.Page) ([]store.OrgMember, string, error) {
	return listing[store.OrgMember]{
		op:    "list org members",
		res:   resOrgMember,
		from:  orgMembersWithUsers,
		where: []string{"org_id = ?"},
		args:  []any{orgID},
		scan:  scanOrgMemberUser,
		key:   func(m store.OrgMember) (time.Time, string) { return m.CreatedAt, m.ID },
	}.run(ctx, q.r, page)
}

// ListUserOrgs lists the memberships of userID in the order it joined.
func (q *queries) ListUserOrgs(ctx context.Context, userID string) ([]store.OrgMember, error) {
	rows, err := q.r.QueryContext(ctx, "SELECT "+orgMemberColumns+" FROM org_members WHERE user_id = ? ORDER BY created_at, id", userID)
	if err != nil {
		return nil, classify("list user orgs", resOrgMember, err)
	}
	out, err := collect(rows, scanOrgMember)
	return out, classify("list user orgs", resOrgMember, err)
}

// SetOrgMemberRole sets the role of userID in orgID.
func (q *queries) SetOrgMemberRole(ctx context.Context, orgID, userID, role string) error {
	if err := required(resOrgMember, "role", role); err != nil {
		return err
	}
	r, err := q.w.ExecContext(ctx, "UPDATE org_members SET role = ? WHERE org_id = ? AND user_id = ?", role, orgID, userID)
	if err != nil {
		return classify("set org member role", resOrgMember, err)
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		return classify("set org member role", resOrgMember, orNoRows(err))
	}
	return nil
}

// RemoveOrgMember deletes userID's membership of orgID and its workspace
// memberships there, and revokes its keys there at at (zero: now), in one
// transaction.
func (q *queries) RemoveOrgMember(ctx context.Context, orgID, userID string, at time.Time) error {
	at = orNow(at)
	return q.atomic(ctx, func(q *queries) error {
		r, err := q.w.ExecContext(ctx, "DELETE FROM org_members WHERE org_id = ? AND user_id = ?", orgID, userID)
		if err != nil {
			return classify("remove org member", resOrgMember, err)
		}
		if n, err := r.RowsAffected(); err != nil || n == 0 {
			return classify("remove org member", resOrgMember, orNoRows(err))
		}
		_, err = q.w.ExecContext(ctx, `DELETE FROM workspace_members
			WHERE user_id = ? AND workspace_id IN (SELECT id FROM workspaces WHERE org_id = ?)`, userID, orgID)
		if err != nil {
			return classify("remove workspace memberships of an org member", resMember, err)
		}
		_, err = q.w.ExecContext(ctx, "UPDATE api_keys SET revoked_at = ? WHERE org_id = ? AND (user_id = ? OR maker_user_id = ?) AND revoked_at IS NULL",
			micros(at), orgID, userID, userID)
		return classify("revoke the keys of an org member", resAPIKey, err)
	})
}

// CountOrgOwners counts the owners of orgID.
func (q *queries) CountOrgOwners(ctx context.Context, orgID string) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM org_members WHERE org_id = ? AND role = 'owner'", orgID).Scan(&n)
	return n, classify("count org owners", resOrgMember, err)
}

// IsWorkspaceMember reports whether userID is a member of workspaceID.
func (q *queries) IsWorkspaceMember(ctx context.Context, workspaceID, userID string) (bool, error) {
	var ok bool
	err := q.r.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM workspace_members WHERE workspace_id = ? AND user_id = ?)",
		workspaceID, userID).Scan(&ok)
	return ok, classify("check workspace member", resMember, err)
}

// ListMemberWorkspaces lists the ids of orgID's workspaces userID is a
// member of, in the order it joined them. None is an empty slice, never
// nil, so it can narrow a SandboxFilter as it is.
func (q *queries) ListMemberWorkspaces(ctx context.Context, orgID, userID string) ([]string, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT m.workspace_id FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
		WHERE w.org_id = ? AND m.user_id = ? ORDER BY m.created_at, m.id`, orgID, userID)
	if err != nil {
		return nil, classify("list member workspaces", resMember, err)
	}
	out, err := collect(rows, func(sc rowScanner) (string, error) {
		var id string
		err := sc.Scan(&id)
		return id, err
	})
	if err != nil {
		return nil, classify("list member workspaces", resMember, err)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

const challengeColumns = "nonce, wallet, message, created_at, expires_at"

func scanChallenge(sc rowScanner) (store.AuthChallenge, error) {
	var c store.AuthChallenge
	var created, expires int64
	if err := sc.Scan(&c.Nonce, &c.Wallet, &c.Message, &created, &expires); err != nil {
		return store.AuthChallenge{}, err
	}
	c.CreatedAt, c.ExpiresAt = time.UnixMicro(created).UTC(), time.UnixMicro(expires).UTC()
	return c, nil
}

// CreateAuthChallenge inserts c and deletes the challenges that expired by
// c.CreatedAt (zero: now).
func (q *queries) CreateAuthChallenge(ctx context.Context, c store.AuthChallenge) error {
	if err := required(resChallenge, "nonce", c.Nonce, "wallet", c.Wallet, "message", c.Message); err != nil {
		return err
	}
	if c.ExpiresAt.IsZero() {
		return required(resChallenge, "expiry", "")
	}
	created := micros(orNow(c.CreatedAt))
	return q.atomic(ctx, func(q *queries) error {
		if _, err := q.w.ExecContext(ctx, "DELETE FROM auth_challenges WHERE expires_at <= ?", created); err != nil {
			return classify("delete expired auth challenges", resChallenge, err)
		}
		_, err := q.w.ExecContext(ctx, "INSERT INTO auth_challenges ("+challengeColumns+") VALUES (?, ?, ?, ?, ?)",
			c.Nonce, strings.ToLower(c.Wallet), c.Message, created, micros(c.ExpiresAt))
		return classify("create auth challenge", resChallenge, err)
	})
}

// GetAuthChallenge returns the challenge with nonce, expired or not.
func (q *queries) GetAuthChallenge(ctx context.Context, nonce string) (store.AuthChallenge, error) {
	c, err := scanChallenge(q.r.QueryRowContext(ctx, "SELECT "+challengeColumns+" FROM auth_challenges WHERE nonce = ?", nonce))
	return c, classify("get auth challenge", resChallenge, err)
}

// ConsumeAuthChallenge deletes the challenge with nonce if it is still
// valid at at (zero: now). One conditional DELETE, so of concurrent callers
// exactly one deletes the row and the rest find nothing.
func (q *queries) ConsumeAuthChallenge(ctx context.Context, nonce string, at time.Time) error {
	r, err := q.w.ExecContext(ctx, "DELETE FROM auth_challenges WHERE nonce = ? AND expires_at > ?", nonce, micros(orNow(at)))
	if err != nil {
		return classify("consume auth challenge", resChallenge, err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		return classify("consume auth challenge", resChallenge, orNoRows(err))
	}
	return nil
}

const authSessionColumns = "id, user_id, created_at, expires_at, revoked_at"

func scanAuthSession(sc rowScanner) (store.AuthSession, error) {
	var s store.AuthSession
	var created, expires int64
	var revoked sql.NullInt64
	if err := sc.Scan(&s.ID, &s.UserID, &created, &expires, &revoked); err != nil {
		return store.AuthSession{}, err
	}
	s.CreatedAt, s.ExpiresAt = time.UnixMicro(created).UTC(), time.UnixMicro(expires).UTC()
	s.RevokedAt = fromMicros(revoked)
	return s, nil
}

// CreateAuthSession inserts s.
func (q *queries) CreateAuthSession(ctx context.Context, s store.AuthSession) error {
	if err := required(resAuthSession, "id", s.ID, "user id", s.UserID); err != nil {
		return err
	}
	if s.ExpiresAt.IsZero() {
		return required(resAuthSession, "expiry", "")
	}
	_, err := q.w.ExecContext(ctx, "INSERT INTO auth_sessions ("+authSessionColumns+") VALUES (?, ?, ?, ?, ?)",
		s.ID, s.UserID, micros(orNow(s.CreatedAt)), micros(s.ExpiresAt), optMicros(s.RevokedAt))
	return classify("create auth session", resAuthSession, err)
}

// GetAuthSession returns the session with id, expired or revoked as it may
// be.
func (q *queries) GetAuthSession(ctx context.Context, id string) (store.AuthSession, error) {
	s, err := scanAuthSession(q.r.QueryRowContext(ctx, "SELECT "+authSessionColumns+" FROM auth_sessions WHERE id = ?", id))
	return s, classify("get auth session", resAuthSession, err)
}

// RevokeAuthSession marks the session with id revoked at at (zero: now)
// unless it already is.
func (q *queries) RevokeAuthSession(ctx context.Context, id string, at time.Time) error {
	r, err := q.w.ExecContext(ctx, "UPDATE auth_sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", micros(orNow(at)), id)
	if err != nil {
		return classify("revoke auth session", resAuthSession, err)
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		return classify("revoke auth session", resAuthSession, orNoRows(err))
	}
	return nil
}
