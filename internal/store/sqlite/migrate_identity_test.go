package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// uuidV4 is the shape of the ids the identity migration makes.
var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestMigrateIdentityKeepsData upgrades a database at schema 7 whose
// workspace members are free-text labels and checks that the labels become
// users and memberships, seats stay as they were (but for two labels of one
// address in one workspace) and the existing keys still work.
func TestMigrateIdentityKeepsData(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path+"?_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	at := func(i int) int64 { return t0.Add(time.Duration(i) * time.Minute).UnixMicro() }
	stmts := []string{`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`}
	for _, m := range ms[:7] {
		stmts = append(stmts, m.SQL, fmt.Sprintf(`INSERT INTO schema_migrations VALUES (%d, '%s', %d)`, m.Version, m.Name, at(0)))
	}
	stmts = append(stmts,
		fmt.Sprintf(`INSERT INTO orgs VALUES ('o1', 'acme', %d), ('o2', 'globex', %d)`, at(0), at(0)),
		fmt.Sprintf(`INSERT INTO workspaces (id, org_id, name, created_at) VALUES
			('w1', 'o1', 'dev', %d), ('w2', 'o1', 'ops', %d), ('w3', 'o2', 'dev', %d)`, at(0), at(0), at(0)),
		`UPDATE workspaces SET member_limit = 3 WHERE id = 'w1'`,
		fmt.Sprintf(`INSERT INTO workspace_members (id, org_id, workspace_id, member, created_at) VALUES
			('m1', 'o1', 'w1', 'alice@example.com', %d),
			('m2', 'o1', 'w1', 'Alice@Example.com', %d),
			('m3', 'o2', 'w3', 'alice@example.com', %d),
			('m4', 'o1', 'w1', 'bob', %d),
			('m5', 'o1', 'w2', 'bob', %d),
			('m6', 'o2', 'w3', 'bob', %d),
			('m7', 'o1', 'w2', 'carol', %d),
			('m8', 'o2', 'w3', 'dave@', %d)`, at(2), at(3), at(1), at(4), at(5), at(6), at(7), at(8)),
		fmt.Sprintf(`INSERT INTO api_keys (id, name, hash, prefix, role, org_id, created_at) VALUES
			('k-admin', 'bootstrap', 'hash-admin', 'pdk_adm', 'admin', NULL, %d),
			('k-acme', 'ci', 'hash-acme', 'pdk_acm', 'admin', 'o1', %d)`, at(0), at(1)),
	)
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	var version int
	var name string
	if err := s.read.QueryRowContext(ctx, "SELECT version, name FROM schema_migrations WHERE version = 8").Scan(&version, &name); err != nil {
		t.Fatal(err)
	}
	if version != 8 || name != "0008_identity.sql" {
		t.Fatalf("migration 8 = %d %s, want 0008_identity.sql", version, name)
	}

	// Users: one alice across orgs, a bob per org, one carol; each as old
	// as its oldest label.
	users, _, err := s.ListUsers(ctx, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	wantUsers := []store.User{
		{Email: "alice@example.com", CreatedAt: time.UnixMicro(at(1)).UTC()},
		{Name: "bob", CreatedAt: time.UnixMicro(at(4)).UTC()},
		{Name: "bob", CreatedAt: time.UnixMicro(at(6)).UTC()},
		{Name: "carol", CreatedAt: time.UnixMicro(at(7)).UTC()},
		// Not an address the API would take: a name, within its org.
		{Name: "dave@", CreatedAt: time.UnixMicro(at(8)).UTC()},
	}
	if len(users) != len(wantUsers) {
		t.Fatalf("users = %+v, want %d", users, len(wantUsers))
	}
	for i, u := range users {
		if !uuidV4.MatchString(u.ID) {
			t.Errorf("user id %q is not a version 4 UUID", u.ID)
		}
		want := wantUsers[i]
		want.ID = u.ID
		if u != want {
			t.Errorf("user %d = %+v, want %+v", i, u, want)
		}
	}
	alice, bob1, bob2, carol, dave := users[0], users[1], users[2], users[3], users[4]

	// Org memberships, role member, in the order each user first appeared
	// in the org.
	orgMembers := func(orgID string) []store.OrgMember {
		t.Helper()
		ms, _, err := s.ListOrgMembers(ctx, orgID, store.Page{})
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	for _, tc := range []struct {
		org   string
		users []store.User
		times []int
	}{
		{"o1", []store.User{alice, bob1, carol}, []int{2, 4, 7}},
		{"o2", []store.User{alice, bob2, dave}, []int{1, 6, 8}},
	} {
		got := orgMembers(tc.org)
		if len(got) != len(tc.users) {
			t.Fatalf("members of %s = %+v, want %d", tc.org, got, len(tc.users))
		}
		for i, m := range got {
			want := store.OrgMember{ID: m.ID, OrgID: tc.org, UserID: tc.users[i].ID, Role: "member",
				CreatedAt: time.UnixMicro(at(tc.times[i])).UTC(), User: tc.users[i]}
			if !uuidV4.MatchString(m.ID) {
				t.Errorf("membership id %q is not a version 4 UUID", m.ID)
			}
			if m != want {
				t.Errorf("member %d of %s = %+v, want %+v", i, tc.org, m, want)
			}
		}
	}

	// Workspace memberships keep their ids and times; m2 collapsed into m1.
	for _, tc := range []struct {
		workspace string
		ids       []string
		users     []store.User
		members   int
	}{
		{"w1", []string{"m1", "m4"}, []store.User{alice, bob1}, 2},
		{"w2", []string{"m5", "m7"}, []store.User{bob1, carol}, 2},
		{"w3", []string{"m3", "m6", "m8"}, []store.User{alice, bob2, dave}, 3},
	} {
		got, _, err := s.ListWorkspaceMembers(ctx, tc.workspace, store.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.ids) {
			t.Fatalf("members of %s = %+v, want %v", tc.workspace, got, tc.ids)
		}
		for i, m := range got {
			if m.ID != tc.ids[i] || m.UserID != tc.users[i].ID || m.User != tc.users[i] {
				t.Errorf("member %d of %s = %+v, want %s as %+v", i, tc.workspace, m, tc.ids[i], tc.users[i])
			}
		}
		seats, err := s.GetWorkspaceSeats(ctx, tc.workspace)
		if err != nil || seats.Members != tc.members {
			t.Errorf("seats of %s = %+v, %v; want %d members", tc.workspace, seats, err, tc.members)
		}
	}

	// The keys work as before and belong to no user.
	for _, tc := range []struct {
		hash string
		want store.APIKey
	}{
		{"hash-admin", store.APIKey{ID: "k-admin", Name: "bootstrap", Hash: "hash-admin", Prefix: "pdk_adm", Role: "admin",
			CreatedAt: time.UnixMicro(at(0)).UTC()}},
		{"hash-acme", store.APIKey{ID: "k-acme", Name: "ci", Hash: "hash-acme", Prefix: "pdk_acm", Role: "admin", OrgID: "o1",
			CreatedAt: time.UnixMicro(at(1)).UTC()}},
	} {
		got, err := s.GetAPIKeyByHash(ctx, tc.hash)
		if err != nil || got != tc.want {
			t.Errorf("key %s = %+v, %v; want %+v", tc.hash, got, err, tc.want)
		}
	}

	// Nothing of the migration's scratch tables is left, and every
	// reference holds.
	var scratch int
	if err := s.write.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_temp_master WHERE name LIKE 'migrate_%'").Scan(&scratch); err != nil || scratch != 0 {
		t.Errorf("scratch tables = %d, %v; want none", scratch, err)
	}
	rows, err := s.write.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		t.Fatal(err)
	}
	if rows.Next() {
		t.Errorf("foreign_key_check reports a broken reference")
	}
	rows.Close()

	// The migrated rows behave like new ones: deleting a user takes its
	// memberships.
	if err := s.DeleteUser(ctx, bob1.ID); err != nil {
		t.Fatal(err)
	}
	if seats, err := s.GetWorkspaceSeats(ctx, "w2"); err != nil || seats.Members != 1 {
		t.Errorf("seats of w2 after deleting bob = %+v, %v; want 1 member", seats, err)
	}
	if got := orgMembers("o1"); len(got) != 2 {
		t.Errorf("members of o1 after deleting bob = %+v, want 2", got)
	}
}
