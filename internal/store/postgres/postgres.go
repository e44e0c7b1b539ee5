// Package postgres implements store.Store on PostgreSQL through pgx, for
// installations that run several paddock replicas on one database.
//
// The SQL is written once, in queries/*.sql, and sqlc generates the Go
// that runs it (package pgdb; `go generate ./internal/store/postgres`).
// The methods here only check input, encode columns and map errors; the
// domain rules they share with SQLite live in package dialect.
//
// Concurrency: SQLite serializes every writer in one process; PostgreSQL
// has many writers on many replicas, so each operation takes the isolation
// it needs:
//
//   - A single-statement write is atomic by itself. Optimistic versions
//     (`UPDATE … WHERE id = $1 AND version = $2`) serialize writers of one
//     row: under READ COMMITTED a second writer waits for the first's row
//     lock, then re-checks its WHERE against the new row and matches
//     nothing, which the store reports as store.ErrStale.
//   - An operation of several statements that reads before it writes
//     (a credit posting, a settlement, a claim from the warm pool) runs in
//     its own transaction and locks what it reads with SELECT … FOR UPDATE
//     (or FOR UPDATE SKIP LOCKED where another row will do).
//   - InTx, whose body callers compose, runs once, at READ COMMITTED,
//     holding a transaction-level advisory lock that every InTx takes
//     first: InTx bodies run one after another across every replica, as
//     SQLite's one writer runs them, so a body's reads stay true until it
//     commits against any other body. What a body shares with the single
//     statements and atomic methods outside InTx is guarded as above, by
//     versions and row locks. A body is never run again: the callers'
//     bodies capture and change state outside the database (the rows they
//     read, what they claimed, metrics), which a retry would see half
//     done. A deadlock or a lost connection is the caller's error (503).
//   - The runtime service holds a runtime's advisory lock (LockRuntime,
//     lock.go) for the whole of an action on it, provider calls included,
//     so two replicas never act on one runtime at once.
//
// Schema: numbered migrations embedded from migrations/*.sql, the same
// list as SQLite's (version for version, name for name), are applied in
// one transaction at Open under an advisory lock, so replicas starting
// together apply each migration once; a failed migration leaves the
// database as it was.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

//go:generate bash ../../../scripts/gen-sql.sh

// inTxLock is the advisory lock every InTx takes first ("pdk-intx").
const inTxLock = 0x70646b2d696e7478

// Store is a store.Store on one PostgreSQL database.
type Store struct {
	*queries
	pool   *pgxpool.Pool
	locks  *pgxpool.Pool // runtimes' advisory locks: see lock.go
	logger *slog.Logger
}

var _ store.Store = (*Store)(nil)

func init() {
	open := func(ctx context.Context, dsn string, logger *slog.Logger) (store.Store, error) {
		return Open(ctx, dsn, logger)
	}
	store.Register("postgres", open)
	store.Register("postgresql", open)
}

// Open connects to the database a DSN names (postgres://user@host:port/db
// or key=value form), applies pending migrations and returns the store.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (*Store, error) {
	return open(ctx, dsn, migrationFS, logger)
}

// open is Open with the migrations of fsys, which tests replace.
func open(ctx context.Context, dsn string, fsys fs.FS, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errdefs.InvalidArgument("invalid_store_dsn", "the postgres DSN does not parse").WithCause(err)
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, errdefs.FailedPrecondition("store_open_failed", "cannot connect to the postgres database").WithCause(err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, errdefs.FailedPrecondition("store_open_failed", "cannot connect to the postgres database").WithCause(err)
	}
	if err := migrate(ctx, pool, fsys, logger); err != nil {
		pool.Close()
		return nil, err
	}
	locks, err := newLockPool(ctx, cfg)
	if err != nil {
		pool.Close()
		return nil, errdefs.FailedPrecondition("store_open_failed", "cannot connect to the postgres database").WithCause(err)
	}
	return &Store{queries: newQueries(pool), pool: pool, locks: locks, logger: logger}, nil
}

// Pool is the store's connection pool, for what runs beside the store on
// the same database (advisory locks, backups).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// InTx runs fn in one transaction, after every InTx before it on any
// replica (see the package comment). If fn returns an error the
// transaction rolls back and InTx returns that error unchanged.
func (s *Store) InTx(ctx context.Context, fn func(q store.Queries) error) error {
	return s.runTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(inTxLock)); err != nil {
			return wrap("wait for the transactions before this one", err)
		}
		return fn(newQueries(tx))
	})
}

// runTx runs fn in one transaction with opts, committing when it returns
// nil. fn's own error comes back unchanged.
func (s *Store) runTx(ctx context.Context, opts pgx.TxOptions, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, opts)
	if err != nil {
		return wrap("begin transaction", err)
	}
	// Rolled back on an error and on a panic in fn, which would otherwise
	// keep the connection; after a commit the rollback does nothing.
	defer func() {
		if err := tx.Rollback(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
			s.logger.WarnContext(ctx, "postgres rollback failed", "error", err)
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return wrap("commit transaction", err)
	}
	return nil
}

// Check reports whether the database answers and its schema is at the
// version this build's migrations end at.
func (s *Store) Check(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	var current *int64
	if err := s.pool.QueryRow(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&current); err != nil {
		return fmt.Errorf("the database does not answer: %w", err)
	}
	if current == nil || int(*current) != len(ms) {
		have := int64(0)
		if current != nil {
			have = *current
		}
		return fmt.Errorf("the database schema is at version %d, this build expects %d", have, len(ms))
	}
	return nil
}

// Close closes the store's connections. A runtime lock still held keeps
// it waiting until it is released.
func (s *Store) Close() error {
	s.locks.Close()
	s.pool.Close()
	return nil
}

// queries implements store.Queries on a pool, or on one transaction.
type queries struct {
	db pgdb.DBTX
	q  *pgdb.Queries
}

var _ store.Queries = (*queries)(nil)

func newQueries(db pgdb.DBTX) *queries {
	return &queries{db: db, q: pgdb.New(db)}
}

// atomic runs fn in a transaction of its own at READ COMMITTED, for a
// method of several statements that locks what it reads (FOR UPDATE).
// Inside InTx it runs on the caller's transaction as a savepoint, so a
// failure rolls back only fn's statements.
func (q *queries) atomic(ctx context.Context, fn func(q *queries) error) error {
	var tx pgx.Tx
	var err error
	switch db := q.db.(type) {
	case pgx.Tx:
		tx, err = db.Begin(ctx)
	case *pgxpool.Pool:
		tx, err = db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	default:
		return fmt.Errorf("postgres store: cannot begin a transaction on %T", q.db)
	}
	if err != nil {
		return wrap("begin transaction", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // after a commit, nothing to do
	if err := fn(newQueries(tx)); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return wrap("commit transaction", err)
	}
	return nil
}

// now is the store's clock for defaults (zero CreatedAt/UpdatedAt).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
