package testenv_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestMain stops the cluster after the tests and fails the package if
// starting it or a database left a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.WithPostgres(m)) }

// connect opens a connection to dsn, closed when t ends.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect to %s: %v", dsn, err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// TestPostgresIsRealPostgreSQL: the DSN reaches a PostgreSQL server, as its
// superuser, over loopback.
func TestPostgresIsRealPostgreSQL(t *testing.T) {
	dsn := testenv.Postgres(t)
	if !strings.HasPrefix(dsn, "postgres://postgres@127.0.0.1:") {
		t.Errorf("dsn %q: want postgres://postgres@127.0.0.1:<port>/…", dsn)
	}
	conn := connect(t, dsn)
	var version string
	var super bool
	if err := conn.QueryRow(t.Context(), "SELECT version(), current_setting('is_superuser') = 'on'").Scan(&version, &super); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, "PostgreSQL ") {
		t.Errorf("version() = %q; want a PostgreSQL server", version)
	}
	if !super {
		t.Error("the test database's user is not a superuser")
	}
}

// TestPostgresDatabasesAreSeparate: two calls give two databases; what one
// test writes the other does not see.
func TestPostgresDatabasesAreSeparate(t *testing.T) {
	a, b := testenv.Postgres(t), testenv.Postgres(t)
	if a == b {
		t.Fatalf("both calls gave %s", a)
	}
	ca, cb := connect(t, a), connect(t, b)
	if _, err := ca.Exec(t.Context(), "CREATE TABLE kv (k text PRIMARY KEY, v int); INSERT INTO kv VALUES ('x', 1)"); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := ca.QueryRow(t.Context(), "SELECT v FROM kv WHERE k = 'x'").Scan(&v); err != nil || v != 1 {
		t.Fatalf("read back: %d, %v", v, err)
	}
	var n int
	if err := cb.QueryRow(t.Context(), "SELECT count(*) FROM pg_tables WHERE tablename = 'kv'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("the second database has the first one's table")
	}
	var dbA, dbB string
	_ = ca.QueryRow(t.Context(), "SELECT current_database()").Scan(&dbA)
	_ = cb.QueryRow(t.Context(), "SELECT current_database()").Scan(&dbB)
	if dbA == dbB || dbA == "" {
		t.Errorf("databases %q and %q: want two", dbA, dbB)
	}
}

// TestPostgresDropsDatabaseAtCleanup: a test's database goes when the test
// ends, even with a connection still open in it.
func TestPostgresDropsDatabaseAtCleanup(t *testing.T) {
	observer := connect(t, testenv.Postgres(t))
	var name string
	t.Run("inner", func(t *testing.T) {
		dsn := testenv.Postgres(t)
		conn, err := pgx.Connect(t.Context(), dsn) // left open on purpose
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	var n int
	if err := observer.QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if name == "" || n != 0 {
		t.Errorf("database %q still exists after its test ended", name)
	}
}

// crashChildEnv makes TestPostgresCrashChild run: it is the test binary
// that TestPostgresStopsWhenBinaryDies kills.
const crashChildEnv = "PADDOCK_TEST_POSTGRES_CRASH_CHILD"

// TestPostgresCrashChild, in a child process, starts the cluster, prints
// its DSN and waits to be killed.
func TestPostgresCrashChild(t *testing.T) {
	if os.Getenv(crashChildEnv) == "" {
		t.Skip("only in the child process of TestPostgresStopsWhenBinaryDies")
	}
	fmt.Println(testenv.Postgres(t))
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	t.Fatal("the parent let the child go instead of killing it")
}

// TestPostgresStopsWhenBinaryDies: a test binary killed with SIGKILL leaves
// no PostgreSQL running and no cluster directory behind.
func TestPostgresStopsWhenBinaryDies(t *testing.T) {
	testenv.RequirePostgres(t)
	child := exec.Command(os.Args[0], "-test.run=^TestPostgresCrashChild$", "-test.count=1")
	child.Env = append(os.Environ(), crashChildEnv+"=1")
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatalf("the child printed no DSN (%q): %v", line, err)
	}
	dataDir, pid := postmaster(t, strings.TrimSpace(line))

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	testenv.Eventually(t, func() error {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("postmaster %d still runs (kill 0: %v)", pid, err)
		}
		if _, err := os.Stat(filepath.Dir(dataDir)); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("the cluster's directory %s is still there (%v)", filepath.Dir(dataDir), err)
		}
		return nil
	})
}

// postmaster returns the data directory of the server dsn names and its
// postmaster's pid, which is running.
func postmaster(t *testing.T, dsn string) (dataDir string, pid int) {
	t.Helper()
	conn := connect(t, dsn)
	if err := conn.QueryRow(t.Context(), "SHOW data_directory").Scan(&dataDir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if pid, err = strconv.Atoi(first); err != nil {
		t.Fatalf("postmaster.pid %q: %v", b, err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the postmaster %d does not run: %v", pid, err)
	}
	return dataDir, pid
}
