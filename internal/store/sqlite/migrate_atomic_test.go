package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/store/upgradetest"
)

// TestFailedMigrationLeavesDatabaseAsItWas applies a list of migrations
// that ends in one failing part-way: the schema, its version and every row
// are as before, including the changes of the migrations applied with it
// in the same open (from v0.1.0's schema, every migration since), and
// opening again with this build's list works.
func TestFailedMigrationLeavesDatabaseAsItWas(t *testing.T) {
	ctx := context.Background()
	cases := map[string]func(t *testing.T) string{
		"from v0.1.0": func(t *testing.T) string {
			return filepath.Join(upgradetest.V010.DataDir(t), "paddock.db")
		},
		"from this build's schema": func(t *testing.T) string {
			path := filepath.Join(upgradetest.V010.DataDir(t), "paddock.db")
			st, err := Open(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			return path
		},
	}
	for name, prepare := range cases {
		t.Run(name, func(t *testing.T) {
			path := prepare(t)
			before := snapshot(t, path)
			if _, err := open(ctx, path, upgradetest.WithFailing(t, migrationFS), nil); err == nil || !strings.Contains(err.Error(), upgradetest.FailingName) {
				t.Fatalf("open with a failing migration: %v, want its error", err)
			}
			upgradetest.SameSnapshots(t, before, snapshot(t, path))
			st, err := Open(ctx, path, nil)
			if err != nil {
				t.Fatalf("open again: %v", err)
			}
			defer st.Close()
			if err := st.Check(ctx); err != nil {
				t.Fatal(err)
			}
			upgradetest.V010.Check(t, st)
		})
	}
}

// snapshot reads the database's whole schema and every row of every
// table, as text.
func snapshot(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_query_only=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snap := map[string][]string{"schema": textRows(t, db, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")}
	for _, row := range textRows(t, db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
		snap[row] = textRows(t, db, "SELECT * FROM "+row+" ORDER BY 1")
	}
	return snap
}

// textRows returns each row of a query's answer, its values as text.
func textRows(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
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
		if len(vals) == 1 {
			out = append(out, fmt.Sprint(vals[0]))
			continue
		}
		out = append(out, fmt.Sprintf("%#v", vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
