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
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// CreateAdminKey creates a new installation admin key in the database of
// dataDir and prints it once to out: the way back in when the key printed
// at the first start was lost. It works while the server is stopped (and
// while it runs: SQLite serializes the write). A data directory without a
// database is an error, not a new installation.
func CreateAdminKey(ctx context.Context, dataDir, name string, out io.Writer) error {
	db := filepath.Join(dataDir, "paddock.db")
	if _, err := os.Stat(db); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no paddock database in %s (start the server once with --data-dir %s, or pass the right --data-dir)", dataDir, dataDir)
		}
		return fmt.Errorf("data dir: %w", err)
	}
	st, err := sqlite.Open(ctx, db, slog.New(slog.DiscardHandler))
	if err != nil {
		return fmt.Errorf("open the database in %s: %w", dataDir, err)
	}
	defer st.Close()
	keys := auth.Keys{Store: st, Now: time.Now}
	plain, _, err := keys.Create(ctx, name, auth.RoleAdmin, "", "")
	if err != nil {
		return fmt.Errorf("create an admin key: %w", err)
	}
	fmt.Fprintf(out, "paddock: new admin API key %q (shown once, store it now): %s\n", name, plain)
	return nil
}
