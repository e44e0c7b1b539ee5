package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one numbered schema change.
type migration struct {
	version int
	name    string // file name, e.g. "0001_init.sql"
	sql     string
}

// loadMigrations reads the embedded migrations in order and checks that
// they are numbered 1, 2, 3, … without gaps or duplicates.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	ms := make([]migration, 0, len(names))
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number", base)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d; migrations must be numbered from 1 without gaps", m.name, i+1)
		}
	}
	return ms, nil
}

// migrate applies pending migrations in one transaction on db (the write
// connection, whose transactions begin IMMEDIATE, so two processes opening
// the same file cannot both apply a migration).
func migrate(ctx context.Context, db *sql.DB, logger *slog.Logger) (retErr error) {
	ms, err := loadMigrations(migrationFS)
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
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("sqlite store: apply migration %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.version, m.name, time.Now().UnixMicro()); err != nil {
			return wrap("record migration "+m.name, err)
		}
		logger.InfoContext(ctx, "applied database migration", "version", m.version, "name", m.name)
	}
	if err := tx.Commit(); err != nil {
		return wrap("commit migrations", err)
	}
	return nil
}
