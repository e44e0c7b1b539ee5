package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestPostgresScript: scripts/postgres.sh start makes a cluster with a
// database "paddock" and prints its DSN; run again it only prints the DSN;
// stop stops the server, and the next start finds the data kept.
func TestPostgresScript(t *testing.T) {
	testenv.RequirePostgres(t)
	parent, err := os.MkdirTemp("", "pdkpgsh")
	if err != nil {
		t.Fatal(err)
	}
	// The cluster runs as postgres, which must reach its directory.
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "pg")
	script := filepath.Join(testenv.RepoRoot(t), "scripts", "postgres.sh")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(script, args...).Output()
		if err != nil {
			var stderr []byte
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				stderr = ee.Stderr
			}
			t.Fatalf("postgres.sh %s: %v: %s", strings.Join(args, " "), err, stderr)
		}
		return strings.TrimSpace(string(out))
	}
	t.Cleanup(func() {
		_ = exec.Command(script, "stop", dir).Run()
		_ = os.RemoveAll(parent)
	})
	port := freePort(t)
	want := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/paddock?sslmode=disable", port)
	if dsn := run("start", dir, fmt.Sprint(port)); dsn != want {
		t.Fatalf("start printed %q; want %q", dsn, want)
	}
	pgQuery(t, want, "CREATE TABLE kept AS SELECT 42 AS v")
	if dsn := run("start", dir); dsn != want {
		t.Errorf("start on the running cluster printed %q; want %q", dsn, want)
	}

	run("stop", dir)
	if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("after stop the server's pid file is still there (%v)", err)
	}
	if conn, err := pgx.Connect(t.Context(), want); err == nil {
		_ = conn.Close(t.Context())
		t.Fatal("the server still answers after stop")
	}
	if dsn := run("start", dir, fmt.Sprint(port)); dsn != want {
		t.Fatalf("start after stop printed %q; want %q", dsn, want)
	}
	if v := pgQuery(t, want, "SELECT v FROM kept"); v != 42 {
		t.Errorf("after a restart the table holds %d; want 42", v)
	}
}

// pgQuery runs sql on dsn and returns the first column of its first row, if
// it has one.
func pgQuery(t *testing.T, dsn, sql string) (v int) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect to %s: %v", dsn, err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}
