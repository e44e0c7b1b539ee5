package postgres

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Seats: workspace members and member limits.

// resWorkspaceMember names a workspace membership in errors, as the SQLite
// dialect does.

func memberFromRow(r pgdb.ListWorkspaceMembersRow) store.WorkspaceMember {
	return store.WorkspaceMember{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, UserID: r.UserID, CreatedAt: r.CreatedAt.UTC(),
		User: store.User{
			ID: r.UserID, Email: fromOptString(r.UserEmail), Wallet: fromOptString(r.UserWallet),
			Name: r.UserName, CreatedAt: r.UserCreatedAt.UTC(),
		},
	}
}

func memberKey(m store.WorkspaceMember) (time.Time, string) { return m.CreatedAt, m.ID }

// AddWorkspaceMember inserts m; a user is a member of a workspace once.
func (q *queries) AddWorkspaceMember(ctx context.Context, m store.WorkspaceMember) error {
	err := dialect.Required(resWorkspaceMember, "id", m.ID, "org id", m.OrgID, "workspace id", m.WorkspaceID, "user id", m.UserID)
	if err != nil {
		return err
	}
	err = q.q.AddWorkspaceMember(ctx, pgdb.AddWorkspaceMemberParams{
		ID: m.ID, OrgID: m.OrgID, WorkspaceID: m.WorkspaceID, UserID: m.UserID, CreatedAt: orNow(m.CreatedAt),
	})
	return dialect.WorkspaceMemberExists(classify("add workspace member", resWorkspaceMember, err))
}

// RemoveWorkspaceMember deletes userID's membership of workspaceID.
func (q *queries) RemoveWorkspaceMember(ctx context.Context, workspaceID, userID string) error {
	n, err := q.q.RemoveWorkspaceMember(ctx, pgdb.RemoveWorkspaceMemberParams{WorkspaceID: workspaceID, UserID: userID})
	return deleted(resWorkspaceMember, n, err)
}

// ListWorkspaceMembers lists the members of workspaceID, with their users,
// in the order they were added.
func (q *queries) ListWorkspaceMembers(ctx context.Context, workspaceID string, page store.Page) ([]store.WorkspaceMember, string, error) {
	return listPage(ctx, "list workspace members", resWorkspaceMember, page,
		func(ctx context.Context, k keyset) ([]pgdb.ListWorkspaceMembersRow, error) {
			return q.q.ListWorkspaceMembers(ctx, pgdb.ListWorkspaceMembersParams{
				WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch,
			})
		}, memberFromRow, memberKey)
}

func seatsFromRow(r pgdb.GetWorkspaceSeatsRow) store.WorkspaceSeats {
	return store.WorkspaceSeats{WorkspaceID: r.ID, OrgID: r.OrgID, MemberLimit: int(r.MemberLimit), Members: int(r.Members)}
}

// GetWorkspaceSeats returns the member limit and count of workspaceID.
func (q *queries) GetWorkspaceSeats(ctx context.Context, workspaceID string) (store.WorkspaceSeats, error) {
	r, err := q.q.GetWorkspaceSeats(ctx, workspaceID)
	if err != nil {
		return store.WorkspaceSeats{}, classify("get workspace seats", dialect.Workspace, err)
	}
	return seatsFromRow(r), nil
}

// SetWorkspaceMemberLimit sets the member limit of workspaceID.
func (q *queries) SetWorkspaceMemberLimit(ctx context.Context, workspaceID string, limit int) error {
	if err := dialect.CheckMemberLimit(limit); err != nil {
		return err
	}
	n, err := q.q.SetWorkspaceMemberLimit(ctx, pgdb.SetWorkspaceMemberLimitParams{ID: workspaceID, MemberLimit: int64(limit)})
	if err != nil {
		return classify("set member limit", dialect.Workspace, err)
	}
	if n == 0 {
		return dialect.NotFound(dialect.Workspace, nil)
	}
	return nil
}

// ListWorkspacesOverMemberLimit lists every workspace whose members exceed
// its limit, by id.
func (q *queries) ListWorkspacesOverMemberLimit(ctx context.Context) ([]store.WorkspaceSeats, error) {
	rows, err := q.q.ListWorkspacesOverMemberLimit(ctx)
	if err != nil {
		return nil, classify("list workspaces over their member limit", dialect.Workspace, err)
	}
	return mapRows(rows, func(r pgdb.ListWorkspacesOverMemberLimitRow) store.WorkspaceSeats {
		return seatsFromRow(pgdb.GetWorkspaceSeatsRow(r))
	}), nil
}
