package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store/dialect"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one numbered schema change.
type migration = dialect.Migration

func loadMigrations(fsys fs.FS) ([]migration, error) { return dialect.LoadMigrations(fsys) }

// migrate applies the pending migrations of fsys (migrationFS but in tests)
// in one transaction on db (the write connection, whose transactions begin
// IMMEDIATE, so two processes opening the same file cannot both apply a
// migration). A migration that fails rolls back every one applied with it.
func migrate(ctx context.Context, db *sql.DB, fsys fs.FS, logger *slog.Logger) (retErr error) {
	ms, err := loadMigrations(fsys)
	if err != nil {
		return fmt.Errorf("sqlite store: load migrations: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return wrap("begin migration", err)
	}
	defer func() {
		if retErr != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return wrap("create schema_migrations", err)
	}
	var current sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&current); err != nil {
		return wrap("read schema version", err)
	}
	have := int(current.Int64)
	if have > len(ms) {
		return errdefs.FailedPrecondition("store_schema_too_new",
			"the database schema is at version %d but this paddock knows versions up to %d; upgrade paddock or use a matching database", have, len(ms))
	}
	for _, m := range ms[have:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("sqlite store: apply migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.Version, m.Name, time.Now().UnixMicro()); err != nil {
			return wrap("record migration "+m.Name, err)
		}
		logger.InfoContext(ctx, "applied database migration", "version", m.Version, "name", m.Name)
	}
	if err := tx.Commit(); err != nil {
		return wrap("commit migrations", err)
	}
	return nil
}
