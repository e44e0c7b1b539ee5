package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/testenv"
)

// lockRig is one database with two stores on it, as two replicas have,
// and a connection of its own to look at (and kill) their sessions.
type lockRig struct {
	dsn   string
	a, b  *postgres.Store
	admin *pgx.Conn
}

func newLockRig(t *testing.T) lockRig {
	t.Helper()
	dsn := testDSN(t)
	open := func() *postgres.Store {
		s, err := postgres.Open(t.Context(), dsn, nil)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	admin, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close(context.Background()) })
	return lockRig{dsn: dsn, a: open(), b: open(), admin: admin}
}

// advisory counts the advisory locks in the database that are held
// (granted) or waited for.
func (r lockRig) advisory(t *testing.T, granted bool) int {
	t.Helper()
	var n int
	err := r.admin.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks
		WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND objsubid = 2 AND granted = $1`, granted).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitWaiters waits until n sessions queue for an advisory lock.
func (r lockRig) waitWaiters(t *testing.T, n int) {
	t.Helper()
	testenv.Eventually(t, func() error {
		if got := r.advisory(t, false); got != n {
			return fmt.Errorf("%d sessions wait for a lock, want %d", got, n)
		}
		return nil
	})
}

// lockAsync asks s for id's lock in the background.
func lockAsync(ctx context.Context, s *postgres.Store, id string) <-chan lockResult {
	ch := make(chan lockResult, 1)
	go func() {
		unlock, err := s.LockRuntime(ctx, id)
		ch <- lockResult{unlock, err}
	}()
	return ch
}

type lockResult struct {
	unlock func()
	err    error
}

// mustLock takes id's lock on s.
func mustLock(t *testing.T, s *postgres.Store, id string) func() {
	t.Helper()
	unlock, err := s.LockRuntime(t.Context(), id)
	if err != nil {
		t.Fatalf("lock %s: %v", id, err)
	}
	return unlock
}

// TestLockRuntimeExcludesAcrossStores: while one store holds a runtime's
// lock another store's LockRuntime for it waits in PostgreSQL, and
// returns once the first releases it; another runtime's lock is free
// meanwhile.
func TestLockRuntimeExcludesAcrossStores(t *testing.T) {
	r := newLockRig(t)
	unlockA := mustLock(t, r.a, "rt-1")
	waiter := lockAsync(t.Context(), r.b, "rt-1")
	r.waitWaiters(t, 1)
	mustLock(t, r.b, "rt-2")()
	select {
	case got := <-waiter:
		t.Fatalf("the second store took a held lock (err %v)", got.err)
	default:
	}
	unlockA()
	got := <-waiter
	if got.err != nil {
		t.Fatalf("lock after release: %v", got.err)
	}
	if n := r.advisory(t, true); n != 1 {
		t.Errorf("%d locks held, want the waiter's one", n)
	}
	got.unlock()
	if n := r.advisory(t, true); n != 0 {
		t.Errorf("%d locks held after both released, want 0", n)
	}
}

// TestLockRuntimeDiesWithItsConnection: a lock whose session ends (its
// server died, or PostgreSQL killed the connection) is released and the
// waiter proceeds; the dead holder's unlock is harmless and its store
// takes locks again.
func TestLockRuntimeDiesWithItsConnection(t *testing.T) {
	r := newLockRig(t)
	unlockA := mustLock(t, r.a, "rt-1")
	waiter := lockAsync(t.Context(), r.b, "rt-1")
	r.waitWaiters(t, 1)
	var killed int
	err := r.admin.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND objsubid = 2 AND granted`).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminate the holder: %d sessions, %v", killed, err)
	}
	got := <-waiter
	if got.err != nil {
		t.Fatalf("lock after the holder died: %v", got.err)
	}
	unlockA() // on a dead connection: releases nothing of the waiter's
	if n := r.advisory(t, true); n != 1 {
		t.Fatalf("%d locks held after the dead holder's unlock, want the waiter's one", n)
	}
	got.unlock()
	mustLock(t, r.a, "rt-1")()
}

// TestLockRuntimeCancelledWaiter: a waiter whose context ends returns its
// error, holding nothing and no longer queued in PostgreSQL, and the lock
// goes to whoever asks next.
func TestLockRuntimeCancelledWaiter(t *testing.T) {
	r := newLockRig(t)
	unlockA := mustLock(t, r.a, "rt-1")
	ctx, cancel := context.WithCancel(t.Context())
	waiter := lockAsync(ctx, r.b, "rt-1")
	r.waitWaiters(t, 1)
	cancel()
	got := <-waiter
	if !errors.Is(got.err, context.Canceled) || got.unlock != nil {
		t.Fatalf("cancelled wait = %v; want context.Canceled and no unlock", got.err)
	}
	r.waitWaiters(t, 0)
	unlockA()
	mustLock(t, r.b, "rt-1")()
}

// TestLockPoolLeavesQueriesTheirConnections: a store holding as many
// runtime locks as its lock pool has connections still answers queries;
// one more lock waits for a connection (and a wait that times out gives
// up) until a lock is released.
func TestLockPoolLeavesQueriesTheirConnections(t *testing.T) {
	r := newLockRig(t)
	var unlocks []func()
	for i := range postgres.LockConns {
		unlocks = append(unlocks, mustLock(t, r.a, fmt.Sprintf("rt-%d", i)))
	}
	if err := r.a.Check(t.Context()); err != nil {
		t.Fatalf("a query with every lock connection held: %v", err)
	}
	if _, err := r.a.ListLeases(t.Context()); err != nil {
		t.Fatalf("a query with every lock connection held: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := r.a.LockRuntime(ctx, "rt-more"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a lock beyond the pool = %v; want it to wait until its deadline", err)
	}
	waiter := lockAsync(t.Context(), r.a, "rt-more")
	unlocks[0]()
	got := <-waiter
	if got.err != nil {
		t.Fatalf("a lock once a connection is free: %v", got.err)
	}
	got.unlock()
	for _, u := range unlocks[1:] {
		u()
	}
	if n := r.advisory(t, true); n != 0 {
		t.Errorf("%d locks held after every release, want 0", n)
	}
}

// holderEnv, set, makes TestLockHolderProcess a process that takes the
// lock of runtime rt-1 on the database it names and holds it until killed
// (or until its stdin closes, so it never outlives the test).
const holderEnv = "PADDOCK_TEST_LOCK_HOLDER_DSN"

// TestLockHolderProcess is the process TestLockRuntimeDiesWithItsProcess
// kills; run by itself it does nothing.
func TestLockHolderProcess(t *testing.T) {
	dsn := os.Getenv(holderEnv)
	if dsn == "" {
		t.Skip("run by TestLockRuntimeDiesWithItsProcess")
	}
	s, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.LockRuntime(context.Background(), "rt-1"); err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// TestLockRuntimeDiesWithItsProcess: a server process that dies (SIGKILL)
// holding a runtime's lock releases it, and another store's waiter takes
// it.
func TestLockRuntimeDiesWithItsProcess(t *testing.T) {
	r := newLockRig(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	cmd.Env = append(os.Environ(), holderEnv+"="+r.dsn)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("the holder process said %q, %v", line, err)
	}
	waiter := lockAsync(t.Context(), r.b, "rt-1")
	r.waitWaiters(t, 1)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	got := <-waiter
	if got.err != nil {
		t.Fatalf("lock after the holder process died: %v", got.err)
	}
	got.unlock()
}

// TestLockRuntimeDatabaseOutOfReach: while the database refuses
// connections a lock fails as unavailable (503 store_unavailable), holding
// nothing; once it allows them again the store locks.
func TestLockRuntimeDatabaseOutOfReach(t *testing.T) {
	r := newLockRig(t)
	u, err := url.Parse(r.dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := pgx.Connect(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close(context.Background()) }()
	allow := func(on bool) {
		t.Helper()
		if _, err := admin.Exec(t.Context(), fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS %t", db, on)); err != nil {
			t.Fatal(err)
		}
	}
	allow(false)
	_, err = r.a.LockRuntime(t.Context(), "rt-1")
	if pe, ok := errdefs.Public(err); !ok || pe.Code != "store_unavailable" || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("a lock with the database out of reach = %v; want 503 store_unavailable", err)
	}
	allow(true)
	mustLock(t, r.a, "rt-1")()
}
