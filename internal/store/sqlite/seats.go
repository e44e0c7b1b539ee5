package sqlite

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Seats: workspace members and member limits.

func memberFromRow(r litedb.ListWorkspaceMembersRow) store.WorkspaceMember {
	return store.WorkspaceMember{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, UserID: r.UserID, CreatedAt: fromMicro(r.CreatedAt),
		User: store.User{
			ID: r.UserID, Email: fromOptString(r.UserEmail), Wallet: fromOptString(r.UserWallet),
			Name: r.UserName, CreatedAt: fromMicro(r.UserCreatedAt),
		},
	}
}

func memberKey(m store.WorkspaceMember) (time.Time, string) { return m.CreatedAt, m.ID }

// AddWorkspaceMember inserts m; a user is a member of a workspace once.
func (q *queries) AddWorkspaceMember(ctx context.Context, m store.WorkspaceMember) error {
	err := required(resMember, "id", m.ID, "org id", m.OrgID, "workspace id", m.WorkspaceID, "user id", m.UserID)
	if err != nil {
		return err
	}
	err = q.wq.AddWorkspaceMember(ctx, litedb.AddWorkspaceMemberParams{
		ID: m.ID, OrgID: m.OrgID, WorkspaceID: m.WorkspaceID, UserID: m.UserID, CreatedAt: micros(orNow(m.CreatedAt)),
	})
	return dialect.WorkspaceMemberExists(classify("add workspace member", resMember, err))
}

// RemoveWorkspaceMember deletes userID's membership of workspaceID.
func (q *queries) RemoveWorkspaceMember(ctx context.Context, workspaceID, userID string) error {
	n, err := q.wq.RemoveWorkspaceMember(ctx, litedb.RemoveWorkspaceMemberParams{WorkspaceID: workspaceID, UserID: userID})
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
	return listPage(ctx, "list workspace members", resMember, page,
		func(ctx context.Context, k keyset) ([]litedb.ListWorkspaceMembersRow, error) {
			return q.rq.ListWorkspaceMembers(ctx, litedb.ListWorkspaceMembersParams{
				WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch,
			})
		}, total(memberFromRow), memberKey)
}

func seatsFromRow(r litedb.GetWorkspaceSeatsRow) store.WorkspaceSeats {
	return store.WorkspaceSeats{WorkspaceID: r.ID, OrgID: r.OrgID, MemberLimit: int(r.MemberLimit), Members: int(r.Members)}
}

// GetWorkspaceSeats returns the member limit and count of workspaceID.
func (q *queries) GetWorkspaceSeats(ctx context.Context, workspaceID string) (store.WorkspaceSeats, error) {
	r, err := q.rq.GetWorkspaceSeats(ctx, workspaceID)
	if err != nil {
		return store.WorkspaceSeats{}, classify("get workspace seats", resWorkspace, err)
	}
	return seatsFromRow(r), nil
}

// SetWorkspaceMemberLimit sets the member limit of workspaceID.
func (q *queries) SetWorkspaceMemberLimit(ctx context.Context, workspaceID string, limit int) error {
	if err := dialect.CheckMemberLimit(limit); err != nil {
		return err
	}
	n, err := q.wq.SetWorkspaceMemberLimit(ctx, litedb.SetWorkspaceMemberLimitParams{ID: workspaceID, MemberLimit: int64(limit)})
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
	rows, err := q.rq.ListWorkspacesOverMemberLimit(ctx)
	if err != nil {
		return nil, classify("list workspaces over their member limit", resWorkspace, err)
	}
	return mapRows(rows, func(r litedb.ListWorkspacesOverMemberLimitRow) (store.WorkspaceSeats, error) {
		return seatsFromRow(litedb.GetWorkspaceSeatsRow(r)), nil
	})
}
