// Package storecopy moves an installation from its embedded SQLite store
// to PostgreSQL (`paddock admin migrate-store`): every record, the ledger
// and its journal, keys and secrets (still sealed: the secrets key file
// stays where it is and must go with the installation), with each table's
// count and the ledger's sums checked on both sides before the copy
// commits.
//
// The copy is one read transaction on SQLite, so it sees one moment of a
// store that may still be serving, and one transaction on PostgreSQL, so a
// copy that fails leaves the target as it was. The target must be empty:
// the command moves an installation, it does not merge two.
package storecopy

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/store/backup"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// Report is what a copy moved.
type Report struct {
	Rows   map[string]int64 // per table (backup.Tables), equal on both sides
	Ledger backup.Sums
}

// Copy copies the SQLite store at sqlitePath into the PostgreSQL database
// pgDSN names. Both are migrated to this build's schema first.
func Copy(ctx context.Context, sqlitePath, pgDSN string, logger *slog.Logger) (Report, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	lite, err := sqlite.Open(ctx, sqlitePath, logger) // brings the source to this build's schema
	if err != nil {
		return Report{}, err
	}
	if err := lite.Close(); err != nil {
		return Report{}, err
	}
	src, err := sql.Open("sqlite", sqlitePath+"?_query_only=1&_busy_timeout=10000")
	if err != nil {
		return Report{}, err
	}
	defer src.Close()
	pg, err := postgres.Open(ctx, pgDSN, logger)
	if err != nil {
		return Report{}, err
	}
	defer pg.Close()

	rtx, err := src.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Report{}, fmt.Errorf("read the sqlite store: %w", err)
	}
	defer func() { _ = rtx.Rollback() }()
	var rep Report
	err = pgx.BeginTxFunc(ctx, pg.Pool(), pgx.TxOptions{IsoLevel: pgx.Serializable}, func(wtx pgx.Tx) error {
		var err error
		rep, err = copyAll(ctx, rtx, wtx)
		return err
	})
	return rep, err
}

// copyAll copies every table and checks the copy; any error rolls the
// target back.
func copyAll(ctx context.Context, rtx *sql.Tx, wtx pgx.Tx) (Report, error) {
	rep := Report{Rows: map[string]int64{}}
	src, dst := backup.SQLiteTx(rtx), backup.PostgresTx(wtx)
	if err := backup.CheckEmpty(ctx, dst, "migrate-store copies into an empty database"); err != nil {
		return rep, err
	}
	for _, table := range backup.Tables {
		n, err := backup.CopyTable(ctx, src, dst, table)
		if err != nil {
			return rep, fmt.Errorf("copy %s: %w", table, err)
		}
		rep.Rows[table] = n
	}
	if err := backup.Loaded(ctx, dst); err != nil {
		return rep, err
	}
	if err := verify(ctx, src, dst, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// verify compares every table's count and the ledger's sums on both sides.
func verify(ctx context.Context, src, dst backup.Tx, rep *Report) error {
	a, err := backup.Counts(ctx, src)
	if err != nil {
		return err
	}
	b, err := backup.Counts(ctx, dst)
	if err != nil {
		return err
	}
	for _, table := range backup.Tables {
		if a[table] != b[table] || a[table] != rep.Rows[table] {
			return fmt.Errorf("%s: %d rows in the source, %d copied, %d in the target", table, a[table], rep.Rows[table], b[table])
		}
	}
	sa, err := backup.LedgerSums(ctx, src)
	if err != nil {
		return err
	}
	sb, err := backup.LedgerSums(ctx, dst)
	if err != nil {
		return err
	}
	if sa != sb {
		return fmt.Errorf("the ledger differs after the copy: source %+v, target %+v", sa, sb)
	}
	rep.Ledger = sb
	return nil
}

// Print writes a report as the command shows it.
func (r Report) Print(w io.Writer) {
	var total int64
	for _, t := range backup.Tables {
		fmt.Fprintf(w, "%-20s %8d\n", t, r.Rows[t])
		total += r.Rows[t]
	}
	fmt.Fprintf(w, "%-20s %8d\n", "total rows", total)
	fmt.Fprintf(w, "ledger: balances %d, held %d, journal sum %d, last entry %d (micro-credits), equal on both sides\n",
		r.Ledger.Balance, r.Ledger.Held, r.Ledger.Journal, r.Ledger.LastSeq)
}
