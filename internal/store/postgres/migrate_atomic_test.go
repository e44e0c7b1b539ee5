package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/store/upgradetest"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestFailedMigrationLeavesDatabaseAsItWas applies a list of migrations
// that ends in one failing part-way: the schema, its version and every row
// are as before, including the changes of the migrations applied with it
// in the same open (from v0.1.0's schema, every migration since), and
// opening again with this build's list works.
func TestFailedMigrationLeavesDatabaseAsItWas(t *testing.T) {
	ctx := context.Background()
	cases := map[string]func(t *testing.T, dsn string){
		"from v0.1.0": func(t *testing.T, dsn string) { upgradetest.V010.LoadPostgres(t, dsn) },
		"from this build's schema": func(t *testing.T, dsn string) {
			upgradetest.V010.LoadPostgres(t, dsn)
			st, err := Open(ctx, dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
		},
	}
	for name, prepare := range cases {
		t.Run(name, func(t *testing.T) {
			dsn := testenv.Postgres(t)
			prepare(t, dsn)
			before := snapshot(t, dsn)
			if _, err := open(ctx, dsn, upgradetest.WithFailing(t, migrationFS), nil); err == nil || !strings.Contains(err.Error(), upgradetest.FailingName) {
				t.Fatalf("open with a failing migration: %v, want its error", err)
			}
			upgradetest.SameSnapshots(t, before, snapshot(t, dsn))
			st, err := Open(ctx, dsn, nil)
			if err != nil {
				t.Fatalf("open again: %v", err)
			}
			defer st.Close()
			if err := st.Check(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// snapshot reads the database's schema (columns, indexes, constraints,
// triggers) and every row of every table, as text.
func snapshot(t *testing.T, dsn string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	snap := map[string][]string{
		"columns": textRows(t, conn, `SELECT table_name, column_name, data_type, is_nullable, column_default
			FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY 1, 2`),
		"indexes": textRows(t, conn, "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1"),
		"constraints": textRows(t, conn, `SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)
			FROM pg_constraint WHERE connamespace = current_schema()::regnamespace ORDER BY 1, 2`),
		"triggers": textRows(t, conn, `SELECT event_object_table, trigger_name, action_statement
			FROM information_schema.triggers WHERE trigger_schema = current_schema() ORDER BY 1, 2`),
	}
	for _, table := range textRows(t, conn, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1") {
		snap["table "+table] = textRows(t, conn, "SELECT to_jsonb(t)::text FROM "+pgx.Identifier{table}.Sanitize()+" t ORDER BY 1")
	}
	return snap
}

// textRows returns each row of a query's answer, its values as text.
func textRows(t *testing.T, conn *pgx.Conn, query string) []string {
	t.Helper()
	rows, _ := conn.Query(context.Background(), query)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		vals, err := r.Values()
		if len(vals) == 1 {
			return fmt.Sprint(vals[0]), err
		}
		return fmt.Sprintf("%#v", vals), err
	})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}
