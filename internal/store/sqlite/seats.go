package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Seats: workspace members and member limits.

const memberColumns = "id, org_id, workspace_id, user_id, created_at"

// membersWithUsers is workspace_members with each member's user, under
// names the listing helper can use unqualified.
const membersWithUsers = `SELECT ` + memberColumns + `, user_email, user_wallet, user_name, user_created_at FROM (
	SELECT m.id, m.org_id, m.workspace_id, m.user_id, m.created_at,
		u.email AS user_email, u.wallet AS user_wallet, u.name AS user_name, u.created_at AS user_created_at
	FROM workspace_members m JOIN users u ON u.id = m.user_id)`

func scanMember(sc rowScanner) (store.WorkspaceMember, error) {
	var m store.WorkspaceMember
	var created, userCreated int64
	var email, wallet sql.NullString
	if err := sc.Scan(&m.ID, &m.OrgID, &m.WorkspaceID, &m.UserID, &created,
		&email, &wallet, &m.User.Name, &userCreated); err != nil {
		return store.WorkspaceMember{}, err
	}
	m.CreatedAt = time.UnixMicro(created).UTC()
	m.User.ID, m.User.Email, m.User.Wallet = m.UserID, email.String, wallet.String
	m.User.CreatedAt = time.UnixMicro(userCreated).UTC()
	return m, nil
}

// AddWorkspaceMember inserts m; a user is a member of a workspace once.
func (q *queries) AddWorkspaceMember(ctx context.Context, m store.WorkspaceMember) error {
	err := required(resMember, "id", m.ID, "org id", m.OrgID, "workspace id", m.WorkspaceID, "user id", m.UserID)
	if err != nil {
		return err
	}
	_, err = q.w.ExecContext(ctx, "INSERT INTO workspace_members ("+memberColumns+") VALUES (?, ?, ?, ?, ?)",
		m.ID, m.OrgID, m.WorkspaceID, m.UserID, micros(orNow(m.CreatedAt)))
	err = classify("add workspace member", resMember, err)
	if errdefs.IsConflict(err) {
		return errdefs.Conflict("member_exists", "the user is already a member of this workspace").WithCause(err)
	}
	return err
}

// RemoveWorkspaceMember deletes userID's membership of workspaceID.
func (q *queries) RemoveWorkspaceMember(ctx context.Context, workspaceID, userID string) error {
	r, err := q.w.ExecContext(ctx, "DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?", workspaceID, userID)
	if err != nil {
		return classify("remove workspace member", resMember, err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return classify("remove workspace member", resMember, err)
	}
	if n == 0 {
		return notFound(resMember, nil)
	}
	return nil
}

// ListWorkspaceMembers lists the members of workspaceID, with their users,
// in the order they were added.
func (q *queries) ListWorkspaceMembers(ctx context.Context, workspaceID string, page store.Page) ([]store.WorkspaceMember, string, error) {
	return listing[store.WorkspaceMember]{
		op:    "list workspace members",
		res:   resMember,
		from:  membersWithUsers,
		where: []string{"workspace_id = ?"},
		args:  []any{workspaceID},
		scan:  scanMember,
		key:   func(m store.WorkspaceMember) (time.Time, string) { return m.CreatedAt, m.ID },
	}.run(ctx, q.r, page)
}

const seatsQuery = `SELECT w.id, w.org_id, w.member_limit,
	(SELECT COUNT(*) FROM workspace_members m WHERE m.workspace_id = w.id) AS members
	FROM workspaces w`

func scanSeats(sc rowScanner) (store.WorkspaceSeats, error) {
	var s store.WorkspaceSeats
	err := sc.Scan(&s.WorkspaceID, &s.OrgID, &s.MemberLimit, &s.Members)
	return s, err
}

// GetWorkspaceSeats returns the member limit and count of workspaceID.
func (q *queries) GetWorkspaceSeats(ctx context.Context, workspaceID string) (store.WorkspaceSeats, error) {
	s, err := scanSeats(q.r.QueryRowContext(ctx, seatsQuery+" WHERE w.id = ?", workspaceID))
	return s, classify("get workspace seats", resWorkspace, err)
}

// SetWorkspaceMemberLimit sets the member limit of workspaceID.
func (q *queries) SetWorkspaceMemberLimit(ctx context.Context, workspaceID string, limit int) error {
	if limit < 0 {
		return errdefs.InvalidArgument("invalid_member_limit", "a member limit must not be negative (0 means none)")
	}
	r, err := q.w.ExecContext(ctx, "UPDATE workspaces SET member_limit = ? WHERE id = ?", limit, workspaceID)
	if err != nil {
		return classify("set member limit", resWorkspace, err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return classify("set member limit", resWorkspace, err)
	}
	if n == 0 {
		return notFound(resWorkspace, nil)
	}
	return nil
}

// ListWorkspacesOverMemberLimit lists every workspace whose members exceed
// its limit, by id.
func (q *queries) ListWorkspacesOverMemberLimit(ctx context.Context) ([]store.WorkspaceSeats, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT w.id, w.org_id, w.member_limit, COUNT(m.id)
		FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
		WHERE w.member_limit > 0
		GROUP BY w.id, w.org_id, w.member_limit
		HAVING COUNT(m.id) > w.member_limit
		ORDER BY w.id`)
	if err != nil {
		return nil, classify("list workspaces over their member limit", resWorkspace, err)
	}
	out, err := collect(rows, scanSeats)
	return out, classify("list workspaces over their member limit", resWorkspace, err)
}
