package backup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// Location names an installation's store and its secrets key, as the
// server finds them.
type Location struct {
	// DataDir holds the secrets key file, and the SQLite store
	// (paddock.db) unless Database names another store.
	DataDir string
	// Database is "" for the data directory's SQLite store, a SQLite path
	// (sqlite:<path> or a plain path) or a postgres:// DSN.
	Database string
	// SecretsKey is PADDOCK_SECRETS_KEY when the key is given that way.
	SecretsKey string
}

// dialect says which store l names and where: a SQLite file's path or a
// PostgreSQL DSN.
func (l Location) dialect() (string, string) {
	db := l.Database
	switch {
	case db == "":
		return "sqlite", filepath.Join(l.DataDir, "paddock.db")
	case strings.HasPrefix(db, "postgres://"), strings.HasPrefix(db, "postgresql://"):
		return "postgres", db
	}
	return "sqlite", strings.TrimPrefix(strings.TrimPrefix(db, "sqlite:"), "//")
}

// KeyFingerprint is the fingerprint of the installation's secrets key
// (secrets.KeyID), "" when it has none yet. It never creates a key.
func KeyFingerprint(l Location) (string, error) {
	raw := l.SecretsKey
	if raw == "" {
		b, err := os.ReadFile(filepath.Join(l.DataDir, secrets.KeyFile))
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("secrets key: %w", err)
		}
		raw = string(b)
	}
	key, err := secrets.ParseKey(raw)
	if err != nil {
		return "", fmt.Errorf("secrets key: %w", err)
	}
	return secrets.KeyID(key), nil
}

// readTx runs fn in one read-only transaction on the store l names, which
// sees one moment while the store goes on serving: on SQLite a read
// transaction (WAL keeps writers going), on PostgreSQL a REPEATABLE READ
// snapshot. The store is not migrated: a backup writes nothing.
func readTx(ctx context.Context, l Location, fn func(dialect string, tx Tx) error) error {
	dialect, where := l.dialect()
	if dialect == "postgres" {
		conn, err := pgx.Connect(ctx, where)
		if err != nil {
			return errdefs.FailedPrecondition("store_open_failed", "cannot connect to the postgres database").WithCause(err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
			func(tx pgx.Tx) error { return fn(dialect, PostgresTx(tx)) })
	}
	if _, err := os.Stat(where); err != nil {
		return errdefs.FailedPrecondition("store_not_found", "no paddock database at %s", where).WithCause(err)
	}
	db, err := sql.Open("sqlite", where+"?_query_only=1&_busy_timeout=10000")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("read the sqlite store: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	return fn(dialect, SQLiteTx(tx))
}

// writeTx migrates the store l names to this build's schema and runs fn
// in one transaction on it, committed when fn returns nil. A SQLite file
// that writeTx created goes again when fn fails, so a failed restore
// leaves the data directory as it was.
func writeTx(ctx context.Context, l Location, fn func(tx Tx) error) (retErr error) {
	dialect, where := l.dialect()
	if dialect == "postgres" {
		st, err := postgres.Open(ctx, where, nil)
		if err != nil {
			return err
		}
		defer st.Close()
		return pgx.BeginTxFunc(ctx, st.Pool(), pgx.TxOptions{IsoLevel: pgx.Serializable},
			func(tx pgx.Tx) error { return fn(PostgresTx(tx)) })
	}
	if _, err := os.Stat(where); errors.Is(err, fs.ErrNotExist) {
		// A fresh data directory, as the server would make it.
		if err := os.MkdirAll(filepath.Dir(where), 0o700); err != nil {
			return err
		}
		defer func() {
			if retErr != nil {
				for _, suffix := range []string{"", "-wal", "-shm"} {
					_ = os.Remove(where + suffix)
				}
			}
		}()
	}
	st, err := sqlite.Open(ctx, where, nil)
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", where+"?_busy_timeout=10000&_foreign_keys=1&_txlock=immediate")
	if err != nil {
		return err
	}
	defer db.Close()
	return sqliteWrite(ctx, db, fn)
}

// sqliteWrite runs fn in one transaction on db, foreign keys checked at
// its commit (tables refer to each other both ways).
func sqliteWrite(ctx context.Context, db *sql.DB, fn func(tx Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("write the sqlite store: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
		return err
	}
	if err := fn(SQLiteTx(tx)); err != nil {
		return err
	}
	return tx.Commit()
}

// schemaVersion is the number of migrations the store has applied.
func schemaVersion(ctx context.Context, tx Tx) (int64, error) {
	var v int64
	err := tx.queryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations", &v)
	return v, err
}

func storeNotEmpty(table string, n int64, why string) error {
	return errdefs.FailedPrecondition("store_not_empty",
		"the target store already has %d rows in %s; %s", n, table, why)
}
