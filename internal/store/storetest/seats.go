package storetest

import (
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// seatMember adds u to ws and returns the membership as a listing has it.
func (f *fixture) seatMember(ws store.Workspace, u store.User) store.WorkspaceMember {
	f.t.Helper()
	m := store.WorkspaceMember{ID: uuid.NewString(), OrgID: ws.OrgID, WorkspaceID: ws.ID, UserID: u.ID, CreatedAt: f.next()}
	must(f.t, f.s.AddWorkspaceMember(f.ctx, m))
	m.User = normUser(u)
	return m
}

// seats is ws's seats.
func (f *fixture) seats(ws store.Workspace) store.WorkspaceSeats {
	f.t.Helper()
	got, err := f.s.GetWorkspaceSeats(f.ctx, ws.ID)
	must(f.t, err)
	return got
}

func testSeats(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w, other := f.workspace(o), f.workspace(o)

	equal(t, "seats of a new workspace", f.seats(w), store.WorkspaceSeats{WorkspaceID: w.ID, OrgID: o.ID})
	aliceUser := f.user(func(u *store.User) { u.Email = "alice@example.com" })
	bobUser := f.user(func(u *store.User) { u.Email, u.Name = "", "bob" })
	alice := f.seatMember(w, aliceUser)
	bob := f.seatMember(w, bobUser)
	f.seatMember(other, aliceUser) // a member of two workspaces

	t.Run("list", func(t *testing.T) {
		got, next, err := s.ListWorkspaceMembers(ctx, w.ID, store.Page{Limit: 1})
		must(t, err)
		want := alice
		want.CreatedAt = ts(want.CreatedAt)
		equal(t, "first page", got, []store.WorkspaceMember{want})
		got, next, err = s.ListWorkspaceMembers(ctx, w.ID, store.Page{Cursor: next})
		must(t, err)
		equal(t, "second page", ids(got, func(m store.WorkspaceMember) string { return m.User.Handle() }), []string{"bob"})
		equal(t, "next", next, "")
	})

	t.Run("duplicate", func(t *testing.T) {
		err := s.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, UserID: bob.UserID})
		wantCode(t, err, errdefs.ErrConflict, "member_exists")
	})

	t.Run("limits", func(t *testing.T) { testSeatLimits(t, f, o, w) })
	t.Run("concurrent adds", func(t *testing.T) { testMemberAddRace(t, f, o) })

	t.Run("errors", func(t *testing.T) {
		wantKind(t, s.RemoveWorkspaceMember(ctx, w.ID, uuid.NewString()), errdefs.ErrNotFound)
		wantKind(t, s.RemoveWorkspaceMember(ctx, uuid.NewString(), bob.UserID), errdefs.ErrNotFound)
		wantKind(t, s.SetWorkspaceMemberLimit(ctx, w.ID, -1), errdefs.ErrInvalidArgument)
		wantKind(t, s.SetWorkspaceMemberLimit(ctx, uuid.NewString(), 1), errdefs.ErrNotFound)
		_, err := s.GetWorkspaceSeats(ctx, uuid.NewString())
		wantKind(t, err, errdefs.ErrNotFound)
		err = s.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: uuid.NewString(), UserID: bob.UserID})
		wantKind(t, err, errdefs.ErrFailedPrecondition)
		err = s.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: other.ID, UserID: uuid.NewString()})
		wantKind(t, err, errdefs.ErrFailedPrecondition)
		err = s.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID})
		wantKind(t, err, errdefs.ErrInvalidArgument)
	})
}

// testSeatLimits sets a member limit on w, of o, which holds two members,
// and checks when w is over it.
func testSeatLimits(t *testing.T, f *fixture, o store.Org, w store.Workspace) {
	s, ctx := f.s, f.ctx
	equal(t, "members", f.seats(w).Members, 2)
	must(t, s.SetWorkspaceMemberLimit(ctx, w.ID, 2))
	if got := f.seats(w); got.MemberLimit != 2 || got.OverLimit() {
		t.Fatalf("at the limit: %+v", got)
	}
	over, err := s.ListWorkspacesOverMemberLimit(ctx)
	must(t, err)
	for _, x := range over {
		if x.WorkspaceID == w.ID {
			t.Fatalf("a workspace at its limit is listed as over it")
		}
	}
	carol := f.seatMember(w, f.user(nil))
	if got := f.seats(w); !got.OverLimit() || got.Members != 3 {
		t.Fatalf("over the limit: %+v", got)
	}
	over, err = s.ListWorkspacesOverMemberLimit(ctx)
	must(t, err)
	found := false
	for _, x := range over {
		if x.WorkspaceID == w.ID {
			found = true
			equal(t, "listed seats", x, store.WorkspaceSeats{WorkspaceID: w.ID, OrgID: o.ID, MemberLimit: 2, Members: 3})
		}
	}
	if !found {
		t.Fatalf("workspace over its limit not listed: %+v", over)
	}
	must(t, s.RemoveWorkspaceMember(ctx, w.ID, carol.UserID))
	equal(t, "back at the limit", f.seats(w).OverLimit(), false)
	must(t, s.SetWorkspaceMemberLimit(ctx, w.ID, 0))
	equal(t, "no limit", f.seats(w).OverLimit(), false)
}

// testMemberAddRace adds users to a new workspace of o from many writers
// at once: each user's first add wins and its others are member_exists,
// and the workspace counts each user once.
func testMemberAddRace(t *testing.T, f *fixture, o store.Org) {
	s, ctx := f.s, f.ctx
	w := f.workspace(o)
	users := []store.User{f.user(nil), f.user(nil), f.user(nil)}
	const addsPerUser = 6
	errs := race(len(users)*addsPerUser, func(i int) error {
		u := users[i%len(users)]
		return s.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, UserID: u.ID})
	})
	won := map[string]int{}
	for i, err := range errs {
		if err == nil {
			won[users[i%len(users)].ID]++
			continue
		}
		wantCode(t, err, errdefs.ErrConflict, "member_exists")
	}
	for _, u := range users {
		if won[u.ID] != 1 {
			t.Fatalf("user %s was added %d times; want once", u.ID, won[u.ID])
		}
	}
	equal(t, "members", f.seats(w).Members, len(users))
}
