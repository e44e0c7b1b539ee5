package storetest

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// ascListing is a listing in creation order, with a way to add a row at a
// given creation time.
type ascListing struct {
	name   string
	create func(at time.Time) string // returns the new row's id
	list   func(p store.Page) ([]string, string, error)
}

// ascListings builds one of each creation-order listing, each in its own
// parent so rows of one do not show up in another.
// indexIDs is the n ids id gives for 0..n-1.
func indexIDs(n int, id func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = id(i)
	}
	return out
}

func ascListings(t *testing.T, f *fixture) []ascListing {
	s, ctx := f.s, f.ctx
	o := f.org()
	wsOfProjects, wsOfRuntimes := f.workspace(o), f.workspace(o)
	orgOfWorkspaces := f.org()
	orgOfMembers := f.org()
	wsOfMembers := f.workspace(orgOfMembers)
	return append([]ascListing{
		{
			name: "orgs",
			create: func(at time.Time) string {
				x := store.Org{ID: uuid.NewString(), Name: "org-" + uuid.NewString(), CreatedAt: at}
				must(t, s.CreateOrg(ctx, x))
				return x.ID
			},
			list: func(p store.Page) ([]string, string, error) {
				got, next, err := s.ListOrgs(ctx, p)
				return indexIDs(len(got), func(i int) string { return got[i].ID }), next, err
			},
		},
		{
			name: "workspaces",
			create: func(at time.Time) string {
				x := store.Workspace{ID: uuid.NewString(), OrgID: orgOfWorkspaces.ID, Name: "ws-" + uuid.NewString(), CreatedAt: at}
				must(t, s.CreateWorkspace(ctx, x))
				return x.ID
			},
			list: func(p store.Page) ([]string, string, error) {
				got, next, err := s.ListWorkspaces(ctx, orgOfWorkspaces.ID, p)
				return indexIDs(len(got), func(i int) string { return got[i].ID }), next, err
			},
		},
		{
			name: "projects",
			create: func(at time.Time) string {
				x := store.Project{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: wsOfProjects.ID, Name: "p-" + uuid.NewString(), CreatedAt: at}
				must(t, s.CreateProject(ctx, x))
				return x.ID
			},
			list: func(p store.Page) ([]string, string, error) {
				got, next, err := s.ListProjects(ctx, wsOfProjects.ID, p)
				return indexIDs(len(got), func(i int) string { return got[i].ID }), next, err
			},
		},
		{
			name: "runtimes",
			create: func(at time.Time) string {
				r := f.runtimeFor(f.project(wsOfRuntimes))
				r.CreatedAt, r.UpdatedAt = at, at
				must(t, s.CreateRuntime(ctx, r))
				return r.ID
			},
			list: func(p store.Page) ([]string, string, error) {
				got, next, err := s.ListRuntimes(ctx, wsOfRuntimes.ID, p)
				return indexIDs(len(got), func(i int) string { return got[i].ID }), next, err
			},
		},
	}, ascMemberListings(t, f, orgOfMembers, wsOfMembers)...)
}

// ascMemberListings are the listings of users and of the members of
// orgOfMembers and its workspace wsOfMembers.
func ascMemberListings(t *testing.T, f *fixture, orgOfMembers store.Org, wsOfMembers store.Workspace) []ascListing {
	s, ctx := f.s, f.ctx
	return []ascListing{
		{
			name: "users",
			create: func(at time.Time) string {
				x := store.User{ID: uuid.NewString(), Name: "user-" + uuid.NewString(), CreatedAt: at}
				must(t, s.CreateUser(ctx, x))
				return x.ID
			},
			list: func(p store.Page) ([]string, string, error) {
				got, next, err := s.ListUsers(ctx, p)
				return indexIDs(len(got), func(i int) string { return got[i].ID }), next, err
			},
		},
		{
			name: "org members",
			create: func(at time.Time) string {
				x := store.OrgMember{ID: uuid.NewString(), OrgID: orgOfMembers.ID, UserID: f.user(nil).ID, Role: "member", CreatedAt: at}
				must(t, s.AddOrgMember(ctx, x))
				return x.ID
			},
			list: func(p store.Page) ([]string, string, error) {
				got, next, err := s.ListOrgMembers(ctx, orgOfMembers.ID, p)
				return indexIDs(len(got), func(i int) string { return got[i].ID }), next, err
			},
		},
		{
			name: "workspace members",
			create: func(at time.Time) string {
				x := store.WorkspaceMember{ID: uuid.NewString(), OrgID: orgOfMembers.ID, WorkspaceID: wsOfMembers.ID, UserID: f.user(nil).ID, CreatedAt: at}
				must(t, s.AddWorkspaceMember(ctx, x))
				return x.ID
			},
			list: func(p store.Page) ([]string, string, error) {
				got, next, err := s.ListWorkspaceMembers(ctx, wsOfMembers.ID, p)
				return indexIDs(len(got), func(i int) string { return got[i].ID }), next, err
			},
		},
	}
}

func testPagination(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	listings := ascListings(t, f)
	// Creation times: out of insertion order, with ties (same microsecond,
	// different nanoseconds) that the id breaks.
	at := base.Add(24 * time.Hour)
	times := []time.Time{
		at.Add(3 * time.Second), at, at.Add(time.Second), at.Add(time.Second + 1),
		at.Add(-time.Second), at.Add(time.Second), at.Add(2 * time.Second),
	}
	for _, l := range listings {
		t.Run(l.name, func(t *testing.T) {
			before, _, err := l.list(store.Page{Limit: store.MaxLimit})
			must(t, err)
			type row struct {
				at time.Time
				id string
			}
			var rows []row
			for _, tm := range times {
				rows = append(rows, row{ts(tm), l.create(tm)})
			}
			slices.SortFunc(rows, func(a, b row) int {
				if c := a.at.Compare(b.at); c != 0 {
					return c
				}
				return strings.Compare(a.id, b.id)
			})
			want := slices.Clone(before) // rows the fixture made earlier, all older
			for _, r := range rows {
				want = append(want, r.id)
			}
			for limit := 1; limit <= len(want)+1; limit++ {
				got := collectPages(t, func(p store.Page) ([]string, string, error) { return l.list(p) }, limit)
				equal(t, fmt.Sprintf("%s with limit %d", l.name, limit), got, want)
			}
		})
	}

	t.Run("default and maximum limits", func(t *testing.T) {
		o := f.org()
		w := f.workspace(o)
		must(t, s.InTx(f.ctx, func(q store.Queries) error {
			for i := range store.MaxLimit + 1 {
				p := store.Project{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, Name: fmt.Sprintf("p%04d", i), CreatedAt: base}
				if err := q.CreateProject(f.ctx, p); err != nil {
					return err
				}
			}
			return nil
		}))
		cases := []struct {
			limit    int
			wantRows int
		}{
			{0, store.DefaultLimit},
			{-5, store.DefaultLimit},
			{store.MaxLimit + 1, store.MaxLimit},
			{1_000_000, store.MaxLimit},
		}
		for _, tc := range cases {
			got, next, err := s.ListProjects(f.ctx, w.ID, store.Page{Limit: tc.limit})
			must(t, err)
			if len(got) != tc.wantRows || next == "" {
				t.Fatalf("limit %d: got %d rows (next %q), want %d rows and a cursor", tc.limit, len(got), next, tc.wantRows)
			}
		}
	})
}

func testCursors(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)
	b64 := base64.RawURLEncoding.EncodeToString
	bad := []struct {
		name   string
		cursor string
	}{
		{"not base64", "!!!not-a-cursor!!!"},
		{"padded standard base64", base64.StdEncoding.EncodeToString([]byte("1:ab")) + "="},
		{"garbage bytes", b64([]byte{0xff, 0xfe, 0x00})},
		{"no separator", b64([]byte("12345"))},
		{"no id", b64([]byte("12345:"))},
		{"time not a number", b64([]byte("soon:" + uuid.NewString()))},
		{"empty parts", b64([]byte(":"))},
	}
	lists := []struct {
		name string
		list func(p store.Page) error
	}{
		{"orgs", func(p store.Page) error { _, _, err := s.ListOrgs(ctx, p); return err }},
		{"workspaces", func(p store.Page) error { _, _, err := s.ListWorkspaces(ctx, o.ID, p); return err }},
		{"projects", func(p store.Page) error { _, _, err := s.ListProjects(ctx, w.ID, p); return err }},
		{"runtimes", func(p store.Page) error { _, _, err := s.ListRuntimes(ctx, w.ID, p); return err }},
		{"sandboxes", func(p store.Page) error {
			_, _, err := s.ListSandboxes(ctx, store.SandboxFilter{OrgID: o.ID}, p)
			return err
		}},
		{"sandboxes of no workspaces", func(p store.Page) error {
			_, _, err := s.ListSandboxes(ctx, store.SandboxFilter{OrgID: o.ID, Workspaces: []string{}}, p)
			return err
		}},
		{"users", func(p store.Page) error { _, _, err := s.ListUsers(ctx, p); return err }},
		{"org members", func(p store.Page) error { _, _, err := s.ListOrgMembers(ctx, o.ID, p); return err }},
		{"workspace members", func(p store.Page) error { _, _, err := s.ListWorkspaceMembers(ctx, w.ID, p); return err }},
		{"api keys", func(p store.Page) error { _, _, err := s.ListAPIKeys(ctx, store.APIKeyFilter{}, p); return err }},
	}
	for _, l := range lists {
		for _, b := range bad {
			t.Run(l.name+"/"+b.name, func(t *testing.T) {
				wantKind(t, l.list(store.Page{Cursor: b.cursor}), errdefs.ErrInvalidArgument)
			})
		}
	}
}

func testTimestamps(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	cases := []struct {
		name string
		at   time.Time
	}{
		{"nanoseconds in another zone", time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.FixedZone("UTC-7", -7*60*60))},
		{"now, with a monotonic reading", time.Now()},
		{"before 1970", time.Date(1969, 7, 20, 20, 17, 40, 500, time.UTC)},
		{"far future", time.Date(2262, 1, 1, 0, 0, 0, 1000, time.UTC)},
		{"exact microsecond", time.Date(2030, 1, 1, 0, 0, 0, 7000, time.Local)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sb := f.sandbox(o, func(x *store.Sandbox) {
				x.CreatedAt, x.StartedAt, x.ExpiresAt, x.UpdatedAt = tc.at, tc.at, tc.at, tc.at
			})
			got, err := s.GetSandbox(ctx, sb.ID)
			must(t, err)
			want := tc.at.Truncate(time.Microsecond)
			for name, v := range map[string]time.Time{
				"CreatedAt": got.CreatedAt, "StartedAt": got.StartedAt, "ExpiresAt": got.ExpiresAt, "UpdatedAt": got.UpdatedAt,
			} {
				if !v.Equal(want) {
					t.Errorf("%s = %v, want %v", name, v, want)
				}
				if v.Location() != time.UTC {
					t.Errorf("%s is in %v, want UTC", name, v.Location())
				}
			}
		})
	}
}
