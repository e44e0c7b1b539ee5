package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// TestMigrateCreditsKeepsData upgrades a database made by the first schema
// to the credits schema and checks that its records survive and gain zero
// accounts and no member limits.
func TestMigrateCreditsKeepsData(t *testing.T) {
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
	now := time.Now().UnixMicro()
	for _, stmt := range []string{
		ms[0].SQL,
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
		fmt.Sprintf(`INSERT INTO schema_migrations VALUES (1, '%s', %d)`, ms[0].Name, now),
		fmt.Sprintf(`INSERT INTO orgs VALUES ('o1', 'acme', %d)`, now),
		fmt.Sprintf(`INSERT INTO workspaces VALUES ('w1', 'o1', 'dev', %d)`, now),
		fmt.Sprintf(`INSERT INTO sandboxes (id, org_id, workspace_id, kind, state, billed_micros, created_at, started_at, version, updated_at)
			VALUES ('s1', 'o1', 'w1', 'runtime', 'running', 42, %d, %d, 1, %d)`, now, now, now),
	} {
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
	a, err := s.GetCreditAccount(ctx, "o1")
	if err != nil || a != (store.CreditAccount{OrgID: "o1"}) {
		t.Fatalf("account after migration = %+v, %v", a, err)
	}
	seats, err := s.GetWorkspaceSeats(ctx, "w1")
	if err != nil || seats != (store.WorkspaceSeats{WorkspaceID: "w1", OrgID: "o1"}) {
		t.Fatalf("seats after migration = %+v, %v", seats, err)
	}
	rows, err := s.ListRunningSandboxes(ctx, "", 10)
	if err != nil || len(rows) != 1 || rows[0].BilledMicros != 42 {
		t.Fatalf("running rows after migration = %+v, %v", rows, err)
	}
}

// TestJournalIsAppendOnly: the schema itself refuses to change or delete a
// journal entry, whatever code runs against it.
func TestJournalIsAppendOnly(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateOrg(ctx, store.Org{ID: "o1", Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PostCredit(ctx, store.CreditPosting{OrgID: "o1", Kind: store.EntryGrant, AmountMicros: 5, IdempotencyKey: "k"}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"UPDATE credit_journal SET amount_micros = 500",
		"DELETE FROM credit_journal",
	} {
		if _, err := s.write.ExecContext(ctx, stmt); err == nil {
			t.Errorf("%s: succeeded on the append-only journal", stmt)
		}
	}
	e, err := s.GetJournalEntryByKey(ctx, "o1", "k")
	if err != nil || e.AmountMicros != 5 {
		t.Fatalf("entry after refused changes = %+v, %v", e, err)
	}
}
