package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paddockhq/paddock/internal/store"
)

// A runtime's lock is a session-level advisory lock, held on a connection
// of the store's lock pool for as long as the operation runs:
//
//   - The key is (lockClassRuntime, hashtext(id)), PostgreSQL's two-int4
//     form, which never meets the one-bigint key migrations lock on. Two
//     runtimes whose ids hash alike share a lock: they take turns, which
//     is slower, never wrong.
//   - The lock belongs to its connection: when the server holding it dies
//     its connection closes and PostgreSQL releases the lock at once (a
//     host that vanishes without closing its sockets keeps it until
//     PostgreSQL's TCP keepalives find the connection dead).
//   - The lock pool is apart from the store's queries and bounded
//     (lockConns), so locks held on many runtimes never take the
//     connections queries need; an operation beyond the bound waits for
//     a connection as it would for a lock.
//   - A waiter whose context ends gives up its connection, which pgx
//     closes after a cancel request, so PostgreSQL stops queuing it for
//     the lock at once (a bare closed socket would leave the session
//     waiting on behalf of nobody until granted) and it holds nothing
//     whatever its race with a grant.

// lockClassRuntime is the first key of every runtime's advisory lock
// ("runt" in ASCII).
const lockClassRuntime int32 = 0x72756e74

// lockConns bounds the connections one store holds locks on, and so how
// many runtimes one server operates on at once.
const lockConns = 32

// unlockTimeout bounds an unlock; a connection that does not answer in
// time is closed, which releases the lock as surely.
const unlockTimeout = 10 * time.Second

var _ store.Locker = (*Store)(nil)

// newLockPool returns the pool runtime locks are held on, connecting as
// cfg does.
func newLockPool(ctx context.Context, cfg *pgxpool.Config) (*pgxpool.Pool, error) {
	cfg = cfg.Copy()
	cfg.MinConns, cfg.MaxConns = 0, lockConns
	return pgxpool.NewWithConfig(ctx, cfg)
}

// LockRuntime takes runtime id's advisory lock (see store.Locker).
func (s *Store) LockRuntime(ctx context.Context, id string) (func(), error) {
	conn, err := s.locks.Acquire(ctx)
	if err != nil {
		return nil, lockFailed(ctx, err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1, hashtext($2))", lockClassRuntime, id); err != nil {
		s.discard(conn)
		return nil, lockFailed(ctx, err)
	}
	return func() { s.unlockRuntime(conn, id) }, nil
}

// lockFailed is why a lock was not taken: ctx's end when it ended (a
// cancelled wait comes back as PostgreSQL's query_canceled), else err.
func lockFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("postgres store: lock runtime: %w", errors.Join(ctx.Err(), err))
	}
	return wrap("lock runtime", err)
}

// unlockRuntime releases id's lock and gives conn back to the pool; a
// connection that fails to release it is closed instead, which does.
func (s *Store) unlockRuntime(conn *pgxpool.Conn, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
	defer cancel()
	var released bool
	err := conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1, hashtext($2))", lockClassRuntime, id).Scan(&released)
	if err == nil && !released {
		err = errors.New("the connection did not hold the lock")
	}
	if err != nil {
		s.logger.Warn("postgres: closing the connection of a runtime lock that did not release", "runtime", id, "error", err)
		s.discard(conn)
		return
	}
	conn.Release()
}

// discard closes conn rather than giving it back to the pool, ending its
// session and every lock the session holds.
func (s *Store) discard(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
	defer cancel()
	_ = conn.Hijack().Close(ctx)
}
