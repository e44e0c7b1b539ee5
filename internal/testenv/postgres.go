package testenv

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// RequirePostgresEnv, when set (scripts/test.sh sets it, as CI does), makes
// a test that needs PostgreSQL fail where its binaries are missing, rather
// than skip.
const RequirePostgresEnv = "PADDOCK_REQUIRE_POSTGRES"

// A throwaway PostgreSQL cluster serves the whole test binary: it starts
// on the first call to Postgres (initdb --no-sync and pg_ctl start, well
// under a second) and each call gets a database of its own in it. The
// cluster lives in a temporary directory, listens on a free loopback port
// and on a socket in that directory, and runs with fsync off: nothing in
// it outlives the binary.
//
// A watchdog stops it: a shell, started beside the cluster in a process
// group of its own, that waits for end of file on a pipe only this binary
// holds open, then runs pg_ctl stop -m immediate and removes the
// directory. StopPostgres closes the pipe and waits for it; a binary that
// dies any other way (a panic, a timeout, SIGKILL) closes the pipe too, as
// the kernel closes a dead process's files, so the cluster never outlives
// it. (A parent-death signal on the postmaster would stop it as well, but
// Go delivers that when the thread that forked it exits, which tests that
// lock threads to enter network namespaces make happen, and it would leave
// the directory behind.)
var (
	pgOnce    sync.Once
	pgCluster *cluster
	pgErr     error
)

// errNoPostgres is why a cluster cannot run here: PostgreSQL is missing.
var errNoPostgres = errors.New("PostgreSQL cannot run here")

// cluster is this binary's PostgreSQL server.
type cluster struct {
	dir  string // holds data/, the socket and the log; removed by the watchdog
	port int

	watchdog *exec.Cmd
	release  io.Closer // the pipe's write end: closing it stops the cluster
}

// Postgres returns the DSN of a new, empty database (postgres://… on
// loopback, user postgres, no password) in this binary's throwaway
// cluster, dropped when t ends, whatever connections are still open. It
// skips (or fails, see RequirePostgresEnv) where PostgreSQL is not
// installed. A package whose tests call it stops the cluster in TestMain
// with MainWithPostgres or WithPostgres.
func Postgres(t testing.TB) string {
	t.Helper()
	c := startCluster(t)
	name := "t_" + randomHex(8)
	if err := c.admin("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create a test database: %v", err)
	}
	t.Cleanup(func() {
		if err := c.admin("DROP DATABASE " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	return c.dsn(name)
}

// RequirePostgres skips (or fails, see RequirePostgresEnv) unless
// PostgreSQL's server binaries are installed and can run here.
func RequirePostgres(t testing.TB) {
	t.Helper()
	if _, _, err := postgresTools(); err != nil {
		missing(t, RequirePostgresEnv, "%v", err)
	}
}

// MainWithPostgres runs the tests and stops the cluster Postgres started,
// for a package's TestMain.
func MainWithPostgres(m *testing.M) {
	os.Exit(WithPostgres(m).Run())
}

// Runner is what a TestMain runs: a *testing.M, or one wrapped by
// WithPostgres (goleak.VerifyTestMain takes either).
type Runner interface{ Run() int }

// WithPostgres wraps m so that running it also stops the cluster Postgres
// started once the tests are done, for a TestMain that hands m on:
// goleak.VerifyTestMain(testenv.WithPostgres(m)).
func WithPostgres(m Runner) Runner { return postgresMain{m} }

type postgresMain struct{ m Runner }

func (p postgresMain) Run() int {
	code := p.m.Run()
	if err := StopPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, "stop the test PostgreSQL:", err)
		code = cmp.Or(code, 1)
	}
	return code
}

// StopPostgres stops the cluster Postgres started, if it did, and removes
// its directory.
func StopPostgres() error {
	if pgCluster == nil {
		return nil
	}
	c := pgCluster
	pgCluster, pgErr = nil, errors.New("the test PostgreSQL cluster was stopped")
	return c.stop()
}

// stop has the watchdog stop the server and remove the directory, and
// waits for it.
func (c *cluster) stop() error {
	_ = c.release.Close()
	err := c.watchdog.Wait()
	return errors.Join(err, os.RemoveAll(c.dir))
}

// startCluster returns this binary's cluster, starting it on first use.
func startCluster(t testing.TB) *cluster {
	t.Helper()
	pgOnce.Do(func() { pgCluster, pgErr = newCluster() })
	if errors.Is(pgErr, errNoPostgres) {
		missing(t, RequirePostgresEnv, "%v", pgErr)
	}
	if pgErr != nil {
		t.Fatalf("start the test PostgreSQL: %v", pgErr)
	}
	return pgCluster
}

// newCluster makes, starts and watches a cluster in a new directory.
func newCluster() (_ *cluster, retErr error) {
	bin, cred, err := postgresTools()
	if err != nil {
		return nil, err
	}
	c := &cluster{}
	if c.dir, err = os.MkdirTemp("", "pdkpg"); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(c.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			_ = os.RemoveAll(c.dir)
			return nil, err
		}
	}
	if err := c.watch(bin, cred); err != nil {
		_ = os.RemoveAll(c.dir)
		return nil, err
	}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, c.stop())
		}
	}()
	data := filepath.Join(c.dir, "data")
	if out, err := c.run(bin, cred, "initdb", "-D", data, "--no-sync", "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale=C", "--no-instructions"); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	return c, c.start(bin, cred)
}

// postgresTools finds the newest installed PostgreSQL's binaries and, when
// this process is root (initdb refuses to run as root), the postgres
// user's credentials to run them with.
func postgresTools() (bin string, cred *syscall.Credential, err error) {
	bin, err = postgresBin()
	if err != nil {
		return "", nil, err
	}
	if os.Geteuid() != 0 {
		return bin, nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return "", nil, fmt.Errorf("%w: it will not run as root, and there is no postgres user to run it as: %v", errNoPostgres, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return "", nil, fmt.Errorf("the postgres user's ids: %v", err)
	}
	return bin, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// debianInitdb matches Debian's initdb of each installed version.
var debianInitdb = "/usr/lib/postgresql/*/bin/initdb"

// postgresBin is the directory of the newest PostgreSQL server binaries:
// Debian's /usr/lib/postgresql/<version>/bin, else where PATH has initdb.
func postgresBin() (string, error) {
	dirs, _ := filepath.Glob(debianInitdb)
	major := func(p string) int {
		v := filepath.Base(filepath.Dir(filepath.Dir(p)))
		n, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
		return n
	}
	slices.SortFunc(dirs, func(a, b string) int { return cmp.Compare(major(b), major(a)) })
	for _, initdb := range dirs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(initdb), "pg_ctl")); err == nil {
			return filepath.Dir(initdb), nil
		}
	}
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return "", fmt.Errorf("%w: its server binaries (initdb, pg_ctl) are not installed: run scripts/setup-host.sh or apt-get install postgresql", errNoPostgres)
	}
	return filepath.Dir(initdb), nil
}

// watchdogScript stops the cluster and removes its directory once its
// standard input ends: $1 is the binaries' directory, $2 the cluster's.
const watchdogScript = `read -r _ || :
"$1/pg_ctl" -D "$2/data" -m immediate -w stop >/dev/null 2>&1 || :
rm -rf "$2"`

// watch starts the watchdog (see the var block above).
func (c *cluster) watch(bin string, cred *syscall.Credential) error {
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "sh", bin, c.dir)
	cmd.Dir = c.dir
	// Its own process group: a Ctrl-C to go test does not stop it before
	// it has done its work.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the watchdog: %w", err)
	}
	c.watchdog, c.release = cmd, w
	return nil
}

// start starts the server on a free loopback port. Another process may
// take the port between the probe and the server's bind, so a start that
// could not bind tries another.
func (c *cluster) start(bin string, cred *syscall.Credential) error {
	logPath := filepath.Join(c.dir, "postgres.log")
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		_ = os.Remove(logPath)
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300", port, c.dir)
		out, err := c.run(bin, cred, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-l", logPath, "-o", opts, "-w", "-t", "120", "start")
		if err == nil {
			c.port = port
			return nil
		}
		log, _ := os.ReadFile(logPath)
		if attempt < 5 && strings.Contains(string(log), "could not bind") {
			continue
		}
		return fmt.Errorf("pg_ctl start: %v: %s\n%s", err, out, log)
	}
}

// run runs one of PostgreSQL's programs as its user, in the cluster's
// directory.
func (c *cluster) run(bin string, cred *syscall.Credential, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd.CombinedOutput()
}

// dsn is the DSN of database db in the cluster.
func (c *cluster) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// admin runs one statement in the cluster's postgres database.
func (c *cluster) admin(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.dsn("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// freePort returns a loopback TCP port no one listened on a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
