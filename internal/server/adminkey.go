package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// CreateAdminKey creates a new installation admin key in the store
// database names (or, when it is "", the SQLite database of dataDir) and
// prints it once to out: the way back in when the key printed
// at the first start was lost. It works while the server is stopped (and
// while it runs: SQLite serializes the write). A data directory without a
// database is an error, not a new installation.
func CreateAdminKey(ctx context.Context, dataDir, database, name string, out io.Writer) error {
	st, err := openOffline(ctx, dataDir, database)
	if err != nil {
		return err
	}
	defer st.Close()
	keys := auth.Keys{Store: st, Now: time.Now}
	plain, _, err := keys.CreateInstallation(ctx, name, "")
	if err != nil {
		return fmt.Errorf("create an admin key: %w", err)
	}
	fmt.Fprintf(out, "paddock: new admin API key %q (shown once, store it now): %s\n", name, plain)
	return nil
}

// openOffline opens an installation's store for an admin command: the
// store database names (a DSN, as serve's --database takes), or else the
// SQLite database of the data directory.
func openOffline(ctx context.Context, dataDir, database string) (store.Store, error) {
	if database != "" {
		st, err := store.Open(ctx, database, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, fmt.Errorf("open the store: %w", err)
		}
		return st, nil
	}
	db := filepath.Join(dataDir, "paddock.db")
	if _, err := os.Stat(db); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no paddock database in %s (start the server once with --data-dir %s, or pass the right --data-dir)", dataDir, dataDir)
		}
		return nil, fmt.Errorf("data dir: %w", err)
	}
	st, err := sqlite.Open(ctx, db, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("open the database in %s: %w", dataDir, err)
	}
	return st, nil
}

// RotateSecretsKey seals every secret of the installation's store (the
// store database names, or dataDir's SQLite database) again under a new
// key (see secrets.Rotate) and says what it did.
func RotateSecretsKey(ctx context.Context, dataDir, database, envKey, newEnvKey string, out io.Writer) error {
	st, err := openOffline(ctx, dataDir, database)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := secrets.Rotate(ctx, st, dataDir, envKey, newEnvKey)
	if err != nil {
		return fmt.Errorf("rotate the secrets key: %w", err)
	}
	if r.KeyFile != "" {
		fmt.Fprintf(out, "paddock: %d secrets sealed again under key %s, now in %s\n", r.Secrets, r.KeyID, r.KeyFile)
		return nil
	}
	fmt.Fprintf(out, "paddock: %d secrets sealed again under key %s; restart every server with PADDOCK_SECRETS_KEY set to the new key\n", r.Secrets, r.KeyID)
	return nil
}
