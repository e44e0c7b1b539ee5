// Package backuptest fills a store with one of every kind of record an
// installation keeps, and reads tables back in one form for both
// dialects, for the tests of backups and store copies.
package backuptest

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// ID is the n-th fixed id of the installation.
func ID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// SecretValue is the value of the installation's one secret.
const SecretValue = "sk-backed-up"

// Installation fills a SQLite store in dataDir (paddock.db) with one of
// every kind of record, its secret sealed under dataDir's secrets key
// (created), and returns the store, open.
func Installation(t *testing.T, dataDir string) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dataDir, "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.SetMeta(ctx, "instance_id", "backup-test"))
	must(st.CreateOrg(ctx, store.Org{ID: ID(1), Name: "acme", CreatedAt: at}))
	must(st.CreateWorkspace(ctx, store.Workspace{ID: ID(2), OrgID: ID(1), Name: "ml", CreatedAt: at}))
	must(st.CreateProject(ctx, store.Project{ID: ID(3), OrgID: ID(1), WorkspaceID: ID(2), Name: "p", CreatedAt: at}))
	must(st.CreateRuntime(ctx, store.Runtime{ID: ID(4), OrgID: ID(1), WorkspaceID: ID(2), ProjectID: ID(3),
		Status: store.RuntimeRunning, CurrentSandboxID: ID(5), CreatedAt: at,
		Config: store.RuntimeConfig{Image: "paddock/base"}}))
	must(st.CreateSandbox(ctx, store.Sandbox{ID: ID(5), OrgID: ID(1), WorkspaceID: ID(2), ProjectID: ID(3), RuntimeID: ID(4),
		Kind: store.KindRuntime, State: store.SandboxRunning, Provider: "docker", ProviderState: []byte{0, 1, 2, 0xff},
		SecretIDs: []string{}, CreatedAt: at, StartedAt: at, ExpiresAt: at.Add(time.Hour)}))
	_, err = st.PostCredit(ctx, store.CreditPosting{OrgID: ID(1), Kind: store.EntryGrant, AmountMicros: 5_000_000, IdempotencyKey: "g1", At: at})
	must(err)
	_, err = st.PostCredit(ctx, store.CreditPosting{OrgID: ID(1), Kind: store.EntryHold, AmountMicros: 1_000_000, SandboxID: ID(5), IdempotencyKey: "h1", At: at})
	must(err)
	must(st.CreateUser(ctx, store.User{ID: ID(6), Email: "ann@example.com", CreatedAt: at}))
	must(st.AddOrgMember(ctx, store.OrgMember{ID: ID(7), OrgID: ID(1), UserID: ID(6), Role: "admin", CreatedAt: at}))
	must(st.CreateAPIKey(ctx, store.APIKey{ID: ID(8), Name: "k", Hash: strings.Repeat("ab", 32), Role: "admin", OrgID: ID(1), UserID: ID(6), CreatedAt: at}))
	keys, err := secrets.LoadKeyring(dataDir, "")
	must(err)
	v, brokered := SecretValue, true
	_, err = secrets.New(st, keys, nil).Create(ctx, ID(1), "", secrets.Spec{Name: "tok", Value: &v, Brokered: &brokered, Hosts: &[]string{"api.example.com"}})
	must(err)
	return st
}

// SQLiteRows reads a SQLite table's rows, sorted, each rendered by Render.
func SQLiteRows(t *testing.T, db *sql.DB, table string) []string {
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
		out = append(out, Render(cols, vals))
	}
	slices.Sort(out)
	return out
}

// PostgresRows reads a PostgreSQL table's rows, sorted, each rendered by
// Render.
func PostgresRows(t *testing.T, conn *pgx.Conn, table string) []string {
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
		out = append(out, Render(cols, vals))
	}
	slices.Sort(out)
	return out
}

// Render prints a row by column name, times as unix microseconds and
// flags as 0/1, so the two dialects' encodings compare equal.
func Render(cols []string, vals []any) string {
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
			v = fmt.Sprintf("%x", x)
		case int32:
			v = int64(x)
		}
		fmt.Fprintf(&b, "%s=%v;", cols[i], v)
	}
	return b.String()
}
