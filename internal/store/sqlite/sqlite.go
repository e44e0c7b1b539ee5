// Package sqlite implements store.Store on an embedded SQLite database file
// (modernc.org/sqlite, pure Go).
//
// Concurrency: the database runs in WAL mode. All writes go through one
// connection whose transactions begin IMMEDIATE, so writers (plain calls and
// InTx alike) are serialized inside the process and take the database's
// write lock up front, never upgrading a read lock mid-transaction. Reads
// outside a transaction use a separate pool of read-only connections and see
// the last committed state. A busy timeout absorbs contention with other
// processes that open the same file; if it still expires the caller gets an
// error of kind errdefs.ErrUnavailable, never a raw driver error. Inside
// InTx, use only the Queries passed to fn: a write through the Store itself
// would wait for the write connection the transaction holds.
//
// Schema: numbered, append-only migrations embedded from migrations/*.sql are
// applied in one transaction at Open and recorded in schema_migrations. Open
// refuses a database whose schema is newer than the newest migration this
// build knows.
//
// Beyond the store.Store contract this dialect documents:
//
//   - Create* sets Version to 1; a zero CreatedAt becomes the current time and
//     a zero UpdatedAt becomes CreatedAt.
//   - Update* keeps the caller's UpdatedAt (the service owns the clock); a
//     zero UpdatedAt becomes the current time. A runtime row and a sandbox
//     row change only through their verbs, which set UpdatedAt to the time
//     they are given (zero: now), and a sandbox row through settlements.
//   - A reference to a missing parent (a workspace of an unknown org, …) and
//     deleting a record others still reference (a project whose runtime still
//     exists) are errdefs.ErrFailedPrecondition.
//   - SecretIDs round-trip nil as nil and empty as empty; an empty
//     ProviderState reads back as nil.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// busyTimeout is how long a connection waits for a lock another process
// holds before giving up.
const busyTimeout = 10 * time.Second

// Store is a store.Store on one SQLite database file.
type Store struct {
	*queries
	logger *slog.Logger
	read   *sql.DB // read-only connections for reads outside a transaction
	write  *sql.DB // the one write connection
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database file at path, applies pending
// migrations and returns the store. A database stamped with a schema newer
// than this build's is refused with errdefs.ErrFailedPrecondition.
func Open(ctx context.Context, path string, logger *slog.Logger) (*Store, error) {
	return open(ctx, path, migrationFS, logger)
}

// open is Open with the migrations of fsys, which tests replace.
func open(ctx context.Context, path string, fsys fs.FS, logger *slog.Logger) (_ *Store, retErr error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}
	// Create the file owner-only before SQLite does; its WAL and shared
	// memory files inherit the mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, errdefs.FailedPrecondition("store_open_failed", "cannot open database file %s", path).WithCause(err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("sqlite store: close %s: %w", path, err)
	}

	ms := int64(busyTimeout / time.Millisecond)
	write, err := sql.Open("sqlite", fmt.Sprintf(
		"%s?_busy_timeout=%d&_foreign_keys=1&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&_pragma=temp_store(memory)", path, ms))
	if err != nil {
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	defer func() {
		if retErr != nil {
			_ = write.Close()
		}
	}()
	if err := write.PingContext(ctx); err != nil {
		return nil, errdefs.FailedPrecondition("store_open_failed", "cannot open database file %s", path).WithCause(err)
	}
	var mode string
	if err := write.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return nil, wrap("read journal mode", err)
	}
	wal := strings.EqualFold(mode, "wal")
	if !wal {
		logger.WarnContext(ctx, "sqlite database is not in WAL mode; concurrent reads will wait for writers", "path", path, "journal_mode", mode)
	}

	if err := migrate(ctx, write, fsys, logger); err != nil {
		return nil, err
	}

	read, err := sql.Open("sqlite", fmt.Sprintf("%s?_busy_timeout=%d&_query_only=1", path, ms))
	if err != nil {
		return nil, fmt.Errorf("sqlite store: open %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	if err := read.PingContext(ctx); err != nil {
		_ = read.Close()
		return nil, errdefs.FailedPrecondition("store_open_failed", "cannot open database file %s", path).WithCause(err)
	}

	return &Store{
		queries: newQueries(dbExec{DB: read, cache: newStmtCache(read), reads: wal}, dbExec{DB: write, cache: newStmtCache(write)}),
		logger:  logger,
		read:    read,
		write:   write,
	}, nil
}

// checkPath accepts a plain filesystem path: no URI forms, no query string,
// no in-memory database (reads and writes use separate connections, which
// would each see their own empty in-memory database).
func checkPath(path string) error {
	switch {
	case path == "":
		return errdefs.InvalidArgument("invalid_store_path", "database path is empty")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return errdefs.InvalidArgument("invalid_store_path", "database path must be a file path, not %q", path)
	case strings.ContainsAny(path, "?#\x00"):
		return errdefs.InvalidArgument("invalid_store_path", "database path must not contain '?', '#' or NUL")
	}
	return nil
}

// InTx runs fn in one IMMEDIATE transaction on the write connection. If fn
// returns an error (or panics) the transaction rolls back and fn's error is
// returned unchanged.
func (s *Store) InTx(ctx context.Context, fn func(q store.Queries) error) (retErr error) {
	tx, done, err := s.queries.w.(dbExec).begin(ctx)
	defer done() // after the rollback below: the connection is free again
	if err != nil {
		return wrap("begin transaction", err)
	}
	committed := false
	defer func() {
		if !committed {
			if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
				s.logger.WarnContext(ctx, "sqlite rollback failed", "error", err)
			}
		}
	}()
	if err := fn(newQueries(tx, tx)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return wrap("commit transaction", err)
	}
	committed = true
	return nil
}

// Close closes the store's connections.
func (s *Store) Close() error {
	return errors.Join(s.queries.r.(dbExec).cache.close(), s.queries.w.(dbExec).cache.close(), s.read.Close(), s.write.Close())
}

// execer is what queries run on: a pool or a transaction, through its
// statement cache (stmtcache.go). It is what the generated queries need
// (litedb.DBTX).
type execer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queries implements store.Queries. Outside a transaction r is the read
// pool and w the write connection; inside one both are the transaction.
// rq and wq run the generated queries (package litedb, from
// queries/*.sql) on r and w; r and w themselves run the few statements
// whose shape is decided at run time.
type queries struct {
	r, w   execer
	rq, wq *litedb.Queries
}

// newQueries returns the queries that read through r and write through w.
func newQueries(r, w execer) *queries {
	return &queries{r: r, w: w, rq: litedb.New(r), wq: litedb.New(w)}
}

var _ store.Queries = (*queries)(nil)

// now is the store's clock for defaults (zero CreatedAt/UpdatedAt).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func init() {
	store.Register("sqlite", func(ctx context.Context, path string, logger *slog.Logger) (store.Store, error) {
		return Open(ctx, path, logger)
	})
}

// Check reports whether the database answers and its schema is at the
// version this build's migrations end at.
func (s *Store) Check(ctx context.Context) error {
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		return err
	}
	var current sql.NullInt64
	if err := s.read.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&current); err != nil {
		return fmt.Errorf("the database does not answer: %w", err)
	}
	if int(current.Int64) != len(ms) {
		return fmt.Errorf("the database schema is at version %d, this build expects %d", current.Int64, len(ms))
	}
	return nil
}
