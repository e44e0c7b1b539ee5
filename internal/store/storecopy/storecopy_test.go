package storecopy_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/backup"
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
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "paddock.db")
	st, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC)
	id := func(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.SetMeta(ctx, "instance_id", "copy-test"))
	must(st.CreateOrg(ctx, store.Org{ID: id(1), Name: "acme", CreatedAt: at}))
	must(st.CreateWorkspace(ctx, store.Workspace{ID: id(2), OrgID: id(1), Name: "ml", CreatedAt: at}))
	must(st.CreateProject(ctx, store.Project{ID: id(3), OrgID: id(1), WorkspaceID: id(2), Name: "p", CreatedAt: at}))
	must(st.CreateRuntime(ctx, store.Runtime{ID: id(4), OrgID: id(1), WorkspaceID: id(2), ProjectID: id(3),
		Status: store.RuntimeRunning, CurrentSandboxID: id(5), CreatedAt: at,
		Config: store.RuntimeConfig{Image: "paddock/base"}}))
	must(st.CreateSandbox(ctx, store.Sandbox{ID: id(5), OrgID: id(1), WorkspaceID: id(2), ProjectID: id(3), RuntimeID: id(4),
		Kind: store.KindRuntime, State: store.SandboxRunning, Provider: "docker", ProviderState: []byte{0, 1, 2},
		SecretIDs: []string{}, CreatedAt: at, StartedAt: at, ExpiresAt: at.Add(time.Hour)}))
	_, err = st.PostCredit(ctx, store.CreditPosting{OrgID: id(1), Kind: store.EntryGrant, AmountMicros: 5_000_000, IdempotencyKey: "g1", At: at})
	must(err)
	_, err = st.PostCredit(ctx, store.CreditPosting{OrgID: id(1), Kind: store.EntryHold, AmountMicros: 1_000_000, SandboxID: id(5), IdempotencyKey: "h1", At: at})
	must(err)
	must(st.CreateUser(ctx, store.User{ID: id(6), Email: "ann@example.com", CreatedAt: at}))
	must(st.AddOrgMember(ctx, store.OrgMember{ID: id(7), OrgID: id(1), UserID: id(6), Role: "admin", CreatedAt: at}))
	must(st.CreateAPIKey(ctx, store.APIKey{ID: id(8), Name: "k", Hash: strings.Repeat("ab", 32), Role: "admin", OrgID: id(1), UserID: id(6), CreatedAt: at}))
	must(st.CreateSecret(ctx, store.Secret{ID: id(9), OrgID: id(1), Name: "tok", Env: "TOK", Brokered: true,
		Hosts: []string{"api.example.com"}, KeyID: "k1", Sealed: []byte("sealed-bytes"), CreatedAt: at}))
	return path
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
		a, b := liteRows(t, lite, table), pgRows(t, pg, table)
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

func liteRows(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query("SELECT * FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, render(cols, vals))
	}
	slices.Sort(out)
	return out
}

func pgRows(t *testing.T, conn *pgx.Conn, table string) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT * FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for _, f := range rows.FieldDescriptions() {
		cols = append(cols, f.Name)
	}
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, render(cols, vals))
	}
	slices.Sort(out)
	return out
}

// render prints a row by column name, times as unix microseconds and
// flags as 0/1, so the two dialects' encodings compare equal.
func render(cols []string, vals []any) string {
	idx := make([]int, len(cols))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(cols[a], cols[b]) })
	var b strings.Builder
	for _, i := range idx {
		v := vals[i]
		switch x := v.(type) {
		case time.Time:
			v = x.UnixMicro()
		case bool:
			v = map[bool]int64{false: 0, true: 1}[x]
		case []byte:
			v = string(x)
		case int32:
			v = int64(x)
		}
		fmt.Fprintf(&b, "%s=%v;", cols[i], v)
	}
	return b.String()
}
