// Package backup writes an installation's store to one portable file and
// restores it (`paddock admin backup` and `restore`), for SQLite and
// PostgreSQL alike: a backup of one dialect restores into the other.
//
// The file is a gzip'd tar: manifest.json (see Manifest), then one
// tables/<name>.jsonl a table in Tables' order, whose first line names the
// columns and their kinds and each further line is one row as a JSON
// array. Sealed secrets travel as the store holds them, with the secrets
// key's fingerprint in the manifest; the key never goes into a backup.
//
// A backup reads everything in one read transaction, so it is one moment
// of a store that goes on serving. A restore writes everything in one
// transaction into an empty store migrated to this build's schema, then
// checks each table's count and the ledger's sums against the manifest;
// a restore that fails leaves the target as it was.
//
// The package also holds what a backup and `paddock admin migrate-store`
// share: the tables an installation is, their columns' kinds in both
// dialects and the conversions between them.
package backup

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// hooks lets a test act between two tables of a backup.
type hooks struct {
	afterTable func(table string)
}

// Backup writes the store l names to w and returns the backup's manifest.
func Backup(ctx context.Context, l Location, w io.Writer) (Manifest, error) {
	return backup(ctx, l, w, hooks{})
}

func backup(ctx context.Context, l Location, w io.Writer, h hooks) (Manifest, error) {
	key, err := KeyFingerprint(l)
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	err = readTx(ctx, l, func(dialect string, tx Tx) error {
		read, err := manifest(ctx, dialect, tx)
		if err != nil {
			return err
		}
		m = read
		m.SecretsKey = key
		return writeArchive(ctx, tx, w, m, h)
	})
	return m, err
}

// manifest reads what a backup's manifest says of the store.
func manifest(ctx context.Context, dialect string, tx Tx) (Manifest, error) {
	m := Manifest{Format: FormatVersion, Dialect: dialect, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	var err error
	if m.SchemaVersion, err = schemaVersion(ctx, tx); err != nil {
		return m, fmt.Errorf("read the schema version: %w", err)
	}
	if err := tx.queryRow(ctx, "SELECT COALESCE((SELECT value FROM meta WHERE key = 'instance_id'), '')", &m.InstanceID); err != nil {
		return m, err
	}
	if m.Rows, err = Counts(ctx, tx); err != nil {
		return m, err
	}
	m.Ledger, err = LedgerSums(ctx, tx)
	return m, err
}

func writeArchive(ctx context.Context, tx Tx, w io.Writer, m Manifest, h hooks) error {
	a := newArchiveWriter(w, m.CreatedAt)
	err := a.add(manifestName, func(w io.Writer) error { return jsonTo(w, m) })
	if err != nil {
		return err
	}
	for _, table := range Tables {
		n, err := a.table(ctx, tx, table)
		if err != nil {
			return fmt.Errorf("back up %s: %w", table, err)
		}
		if n != m.Rows[table] {
			return fmt.Errorf("back up %s: counted %d rows, read %d", table, m.Rows[table], n)
		}
		if h.afterTable != nil {
			h.afterTable(table)
		}
	}
	return a.close()
}

// RestoreOptions change what a restore accepts.
type RestoreOptions struct {
	// ForceKeyMismatch restores a backup whose secrets key is not the
	// target's: its secrets will not open until the right key is there.
	ForceKeyMismatch bool
}

// Restore writes the backup in r into the empty store l names and returns
// the backup's manifest. It refuses a store that holds records
// (store_not_empty), a backup of a newer schema (store_schema_too_new) or
// an older one (backup_schema_old), and a backup sealed under another
// secrets key than the target's (backup_key_mismatch) unless
// opts.ForceKeyMismatch.
func Restore(ctx context.Context, l Location, r io.Reader, opts RestoreOptions) (Manifest, error) {
	a, m, err := openArchive(r)
	if err != nil {
		return m, err
	}
	if err := checkKey(l, m, opts); err != nil {
		return m, err
	}
	err = writeTx(ctx, l, func(tx Tx) error {
		if err := checkSchema(ctx, tx, m); err != nil {
			return err
		}
		if err := CheckEmpty(ctx, tx, "a backup restores into an empty store only"); err != nil {
			return err
		}
		return load(ctx, tx, a, m)
	})
	return m, err
}

// checkKey refuses a backup whose secrets would not open under the
// target's key.
func checkKey(l Location, m Manifest, opts RestoreOptions) error {
	have, err := KeyFingerprint(l)
	if err != nil || m.SecretsKey == "" || have == "" || have == m.SecretsKey || opts.ForceKeyMismatch {
		return err
	}
	return errdefs.FailedPrecondition("backup_key_mismatch",
		"the backup's secrets are sealed under the key %s but the target's key is %s; put the backed-up installation's secrets key in place (or restore with --force-key-mismatch, and its secrets will not open)",
		m.SecretsKey, have)
}

// checkSchema refuses a backup made at another schema version than the
// target's, which is this build's.
func checkSchema(ctx context.Context, tx Tx, m Manifest) error {
	have, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	switch {
	case m.SchemaVersion > have:
		return errdefs.FailedPrecondition("store_schema_too_new",
			"the backup is at schema version %d but this paddock knows versions up to %d; restore it with a newer paddock", m.SchemaVersion, have)
	case m.SchemaVersion < have:
		return errdefs.FailedPrecondition("backup_schema_old",
			"the backup is at schema version %d and this paddock at %d; restore it with the paddock version that made it, then start this one on the restored store, which migrates it forward", m.SchemaVersion, have)
	}
	return nil
}

// load writes every table of the archive and checks the result against
// the manifest.
func load(ctx context.Context, tx Tx, a *archiveReader, m Manifest) error {
	for _, table := range Tables {
		src, err := a.next(table)
		if err != nil {
			return err
		}
		if _, err := copyTable(ctx, src, tx, table); err != nil {
			// A damaged file can inflate into well-formed but wrong
			// content (a column's name changed, say) before its
			// checksum, at the end, fails: the checksum decides.
			if derr := a.drain(); derr != nil {
				return derr
			}
			return fmt.Errorf("restore %s: %w", table, err)
		}
	}
	if err := a.end(); err != nil {
		return err
	}
	if err := Loaded(ctx, tx); err != nil {
		return err
	}
	return verify(ctx, tx, m)
}

// verify compares the restored store with the manifest.
func verify(ctx context.Context, tx Tx, m Manifest) error {
	counts, err := Counts(ctx, tx)
	if err != nil {
		return err
	}
	for _, table := range Tables {
		if counts[table] != m.Rows[table] {
			return errdefs.InvalidArgument("backup_inconsistent", "%s: the manifest says %d rows, %d were restored", table, m.Rows[table], counts[table])
		}
	}
	sums, err := LedgerSums(ctx, tx)
	if err != nil {
		return err
	}
	if sums != m.Ledger {
		return errdefs.InvalidArgument("backup_inconsistent", "the restored ledger %+v differs from the manifest's %+v", sums, m.Ledger)
	}
	return nil
}
