package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store/dialect"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLock is the advisory lock key replicas take while they migrate
// ("paddock" in ASCII).
const migrationLock = 0x7061646465636b

func loadMigrations() ([]dialect.Migration, error) { return dialect.LoadMigrations(migrationFS) }

// migrate applies the pending migrations of fsys (migrationFS but in
// tests) in one transaction, holding an advisory lock so a second replica
// waits and then finds nothing to do. A migration that fails rolls back
// every one applied with it: PostgreSQL's DDL is transactional.
func migrate(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS, logger *slog.Logger) error {
	ms, err := dialect.LoadMigrations(fsys)
	if err != nil {
		return fmt.Errorf("postgres store: load migrations: %w", err)
	}
	return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
			return wrap("lock for migrations", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    BIGINT PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at TIMESTAMPTZ NOT NULL
		)`); err != nil {
			return wrap("create schema_migrations", err)
		}
		var current *int64
		if err := tx.QueryRow(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&current); err != nil {
			return wrap("read schema version", err)
		}
		have := 0
		if current != nil {
			have = int(*current)
		}
		if have > len(ms) {
			return errdefs.FailedPrecondition("store_schema_too_new",
				"the database schema is at version %d but this paddock knows versions up to %d; upgrade paddock or use a matching database", have, len(ms))
		}
		for _, m := range ms[have:] {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("postgres store: apply migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())",
				m.Version, m.Name); err != nil {
				return wrap("record migration "+m.Name, err)
			}
			logger.InfoContext(ctx, "applied database migration", "version", m.Version, "name", m.Name)
		}
		return nil
	})
}
