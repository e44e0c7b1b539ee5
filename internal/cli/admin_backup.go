package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/store/backup"
)

// storeFlags are the flags that name an installation's store for backup
// and restore.
type storeFlags struct {
	dataDir, database string
}

func (f *storeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dataDir, "data-dir", config.Default().DataDir, "the server's data directory, with its secrets key (env PADDOCK_DATA_DIR)")
	cmd.Flags().StringVar(&f.database, "database", "", "the store, when not <data-dir>/paddock.db: sqlite:<path> or postgres://… (env PADDOCK_STORE)")
}

// location is the store the flags (or their environment) name.
func (f *storeFlags) location(cmd *cobra.Command) (backup.Location, error) {
	db := f.database
	if !cmd.Flags().Changed("database") {
		db = os.Getenv("PADDOCK_STORE")
	}
	if scheme, _, ok := strings.Cut(db, "://"); ok && scheme != "postgres" && scheme != "postgresql" {
		return backup.Location{}, usagef("--database must be sqlite:<path>, a path or a postgres:// DSN, not %s://", scheme)
	}
	return backup.Location{DataDir: adminDataDir(cmd, f.dataDir), Database: db, SecretsKey: os.Getenv("PADDOCK_SECRETS_KEY")}, nil
}

// newBackupCmd is `paddock admin backup`.
func newBackupCmd() *cobra.Command {
	var flags storeFlags
	var out string
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Write the installation's store to one backup file, while the server serves",
		Long: `Write every record of the installation's store (SQLite or PostgreSQL) to one
portable file: orgs, runtimes and the sandbox ledger, credit accounts and the
journal, users, keys and secrets (still sealed). The backup reads one moment of
the store in one read transaction; the server goes on serving meanwhile.

The file holds the secrets key's fingerprint, never the key: keep the data
directory's secrets.key (or PADDOCK_SECRETS_KEY) safe beside the backups.`,
		Example: `  paddock admin backup --data-dir ./data -o paddock-backup.tar.gz
  paddock admin backup --database postgres://paddock@db:5432/paddock -o - > backup.tar.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			loc, err := flags.location(cmd)
			if err != nil {
				return err
			}
			if out == "" {
				return usagef("-o <file> is required: where to write the backup (- for standard output)")
			}
			m, err := writeBackup(cmd, loc, out)
			if err != nil {
				return err
			}
			m.Print(cmd.ErrOrStderr())
			return nil
		},
	}
	cmd.SetUsageTemplate(serverUsage)
	flags.add(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "the backup file to write (- for standard output)")
	return cmd
}

// writeBackup writes the backup to out through a temporary file renamed
// into place, so a backup that fails leaves no file that looks whole.
func writeBackup(cmd *cobra.Command, loc backup.Location, out string) (backup.Manifest, error) {
	if out == "-" {
		return backup.Backup(cmd.Context(), loc, cmd.OutOrStdout())
	}
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return backup.Manifest{}, err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	m, err := backup.Backup(cmd.Context(), loc, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), out)
	}
	return m, err
}

// newRestoreCmd is `paddock admin restore`.
func newRestoreCmd() *cobra.Command {
	var flags storeFlags
	var force bool
	cmd := &cobra.Command{
		Use:   "restore <file>",
		Short: "Restore a backup into an empty store",
		Long: `Restore a backup file (from paddock admin backup, of either store) into an empty
store: the data directory's SQLite by default, or --database. The store is
migrated to this paddock's schema, then every record is written in one
transaction and each table's count and the ledger's sums are checked against
the backup before it commits: a restore that fails leaves the store as it was.

Refused: a store that holds records (store_not_empty), a backup made at a newer
schema (store_schema_too_new) or an older one (backup_schema_old: restore it
with the paddock that made it, then upgrade), and a backup whose secrets are
sealed under another key than the data directory's (backup_key_mismatch) unless
--force-key-mismatch. Put the installation's secrets.key into the data
directory (or set PADDOCK_SECRETS_KEY) before you restore.`,
		Example: `  cp old/secrets.key ./data/ && paddock admin restore --data-dir ./data paddock-backup.tar.gz
  paddock admin restore --database postgres://paddock@db:5432/paddock paddock-backup.tar.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			loc, err := flags.location(cmd)
			if err != nil {
				return err
			}
			var in io.Reader = cmd.InOrStdin()
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return usagef("cannot read the backup file: %v", err)
				}
				defer f.Close()
				in = f
			}
			m, err := backup.Restore(cmd.Context(), loc, in, backup.RestoreOptions{ForceKeyMismatch: force})
			if err != nil {
				return err
			}
			m.Print(cmd.OutOrStdout())
			fmt.Fprintln(cmd.OutOrStdout(), "restored")
			if have, err := backup.KeyFingerprint(loc); err == nil && have == "" && m.SecretsKey != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s has no secrets key yet; put the key %s there (secrets.key, or PADDOCK_SECRETS_KEY) before the server starts, or the secrets will not open\n",
					loc.DataDir, m.SecretsKey)
			}
			return nil
		},
	}
	cmd.SetUsageTemplate(serverUsage)
	flags.add(cmd)
	cmd.Flags().BoolVar(&force, "force-key-mismatch", false, "restore even when the backup's secrets are sealed under another key than the target's")
	return cmd
}
