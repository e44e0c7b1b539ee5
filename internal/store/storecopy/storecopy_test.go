package storecopy_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store/backup"
	"github.com/paddockhq/paddock/internal/store/backup/backuptest"
	"github.com/paddockhq/paddock/internal/store/sqlite"
	"github.com/paddockhq/paddock/internal/store/storecopy"
)

func TestMain(m *testing.M) { testenv.MainWithPostgres(m) }

// testDSN returns a DSN of a fresh, empty database for one test.
func testDSN(t *testing.T) string { return testenv.Postgres(t) }

// installation fills a SQLite store with one of every kind of record the
// copy must keep, and returns its path.
func installation(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	backuptest.Installation(t, dir)
	return filepath.Join(dir, "paddock.db")
}

func TestCopyKeepsEveryRecord(t *testing.T) {
	ctx := context.Background()
	path := installation(t)
	dsn := testDSN(t)
	rep, err := storecopy.Copy(ctx, path, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows["credit_journal"] != 2 || rep.Rows["secrets"] != 1 || rep.Ledger.Balance != 5_000_000 || rep.Ledger.Held != 1_000_000 {
		t.Fatalf("report %+v", rep)
	}
	lite, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	for _, table := range backup.Tables {
		a, b := backuptest.SQLiteRows(t, lite, table), backuptest.PostgresRows(t, pg, table)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs:\nsqlite   %v\npostgres %v", table, a, b)
		}
	}
	// The next journal entry continues the sequence.
	var next int64
	if err := pg.QueryRow(ctx, `INSERT INTO credit_journal (id, org_id, kind, amount_micros, held_micros,
		balance_after_micros, held_after_micros, idempotency_key, created_at)
		VALUES ('x', '00000000-0000-4000-8000-000000000001', 'grant', 1, 0, 1, 0, 'x', now()) RETURNING seq`).Scan(&next); err != nil {
		t.Fatal(err)
	}
	if next != 3 {
		t.Fatalf("next journal seq = %d, want 3", next)
	}
}

func TestCopyRefusesATargetInUse(t *testing.T) {
	ctx := context.Background()
	path := installation(t)
	dsn := testDSN(t)
	if _, err := storecopy.Copy(ctx, path, dsn, nil); err != nil {
		t.Fatal(err)
	}
	_, err := storecopy.Copy(ctx, path, dsn, nil)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "already has") {
		t.Fatalf("second copy: %v, want store_not_empty", err)
	}
}

// TestEveryTableIsCopiedOrSkipped fails when a migration adds a table the
// copy does not name.
func TestEveryTableIsCopiedOrSkipped(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "paddock.db")
	st, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(backup.Tables, name) && !slices.Contains(backup.Skipped, name) {
			t.Errorf("table %s is neither copied nor skipped by migrate-store", name)
		}
	}
}
