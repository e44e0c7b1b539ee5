package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// maxCachedStmts bounds a cache: most queries are fixed text, but lists
// with filters and multi-row writes are built with varying shapes, and
// those past the bound simply run unprepared.
const maxCachedStmts = 512

// stmtCache keeps the statements prepared on one pool, by query text.
// Unprepared, SQLite parses and plans every query anew, which is much of a
// small query's cost; a *sql.Stmt is prepared once per connection and
// reused, concurrently, for the pool's life.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

// get returns query prepared, or nil when the cache is full or preparing
// failed (the caller then runs it unprepared, which reports any error). It
// holds no lock while it prepares: preparing waits for a connection of the
// pool, and a caller may hold one (rows it is still reading).
func (c *stmtCache) get(ctx context.Context, query string) *sql.Stmt {
	c.mu.Lock()
	st, ok := c.m[query]
	full := len(c.m) >= maxCachedStmts
	c.mu.Unlock()
	if ok || full {
		return st
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[query]; ok {
		_ = st.Close() // another caller prepared it meanwhile
		return prev
	}
	if len(c.m) >= maxCachedStmts {
		_ = st.Close()
		return nil
	}
	c.m[query] = st
	return st
}

// cached returns query's statement if it is prepared.
func (c *stmtCache) cached(query string) (*sql.Stmt, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[query]
	return st, ok
}

// prepareLater prepares queries a transaction ran unprepared, now that
// the transaction has given its connection back, so the next
// transactions find them.
func (c *stmtCache) prepareLater(ctx context.Context, queries []string) {
	for _, q := range queries {
		c.get(ctx, q)
	}
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.m {
		errs = append(errs, st.Close())
	}
	clear(c.m)
	return errors.Join(errs...)
}

// dbExec runs queries on a pool through its statement cache.
type dbExec struct {
	*sql.DB
	cache *stmtCache
	// reads is set on the read pool of a database in WAL mode: its
	// one-row reads do not watch their context (see QueryRowContext).
	reads bool
}

func (d dbExec) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := d.cache.get(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return d.DB.ExecContext(ctx, query, args...)
}

func (d dbExec) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := d.cache.get(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return d.DB.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query for one row. On the read pool of a
// database in WAL mode the query does not watch ctx once it runs: a
// one-row read is an index lookup or a count, done in microseconds, and a
// reader in WAL mode does not wait for the writer's lock, while watching
// a context that can end costs two goroutines a query (the driver's, to
// interrupt SQLite, and database/sql's, to close the rows). A context
// that has already ended still refuses it; one that ends while the read
// waits for a free connection of the pool no longer cuts that wait short
// (the pool's other reads end it).
func (d dbExec) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if d.reads && ctx.Err() == nil {
		ctx = context.WithoutCancel(ctx)
	}
	if st := d.cache.get(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return d.DB.QueryRowContext(ctx, query, args...)
}

// begin starts a transaction whose queries use the pool's statements.
// After it ends, its caller calls done, which prepares the statements it
// ran unprepared.
func (d dbExec) begin(ctx context.Context) (tx txExec, done func(), err error) {
	t, err := d.DB.BeginTx(ctx, nil)
	missed := new([]string)
	return txExec{Tx: t, cache: d.cache, missed: missed}, func() { d.cache.prepareLater(context.WithoutCancel(ctx), *missed) }, err
}

// txExec runs queries in a transaction with the statements its pool has
// prepared: on the pool's one write connection each is bound to the
// transaction without being parsed again (database/sql closes the bound
// copies with the transaction). A statement is never prepared on the pool
// inside a transaction — the transaction holds the pool's one connection,
// so that would wait for itself; those it lacked are noted and prepared
// once it ends (see prepareLater).
type txExec struct {
	*sql.Tx
	cache  *stmtCache
	missed *[]string
}

func (t txExec) stmt(ctx context.Context, query string) *sql.Stmt {
	if st, ok := t.cache.cached(query); ok {
		return t.Tx.StmtContext(ctx, st)
	}
	if t.missed != nil && len(*t.missed) < maxCachedStmts {
		*t.missed = append(*t.missed, query)
	}
	return nil
}

func (t txExec) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t txExec) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t txExec) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}
