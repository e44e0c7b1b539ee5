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
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// Tables are the tables copied, parents before children.
var Tables = []string{
	"meta", "orgs", "users", "workspaces", "projects", "runtimes", "sandboxes",
	"api_keys", "credit_accounts", "credit_journal", "workspace_members", "org_members",
	"warm_sandboxes", "egress_decisions", "secrets", "capability_versions",
	"capability_bindings", "sessions", "session_events", "auth_challenges",
	"auth_sessions", "ssh_keys", "invitations",
}

// Skipped are the tables left behind on purpose: each store keeps its own
// schema history, and leases, rate buckets and live holds belong to the
// replicas of the old store.
var Skipped = []string{"schema_migrations", "leases", "rate_buckets", "live_holds"}

// Report is what a copy moved.
type Report struct {
	Rows   map[string]int64 // per table, equal on both sides
	Ledger Sums
}

// Sums are the ledger's totals, compared on both sides.
type Sums struct {
	Balance, Held, Journal, LastSeq int64
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
func copyAll(ctx context.Context, src *sql.Tx, dst pgx.Tx) (Report, error) {
	rep := Report{Rows: map[string]int64{}}
	for _, table := range Tables {
		var n int64
		if err := dst.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			return rep, err
		}
		if n > 0 {
			return rep, errdefs.FailedPrecondition("store_not_empty",
				"the target database already has %d rows in %s; migrate-store copies into an empty database", n, table)
		}
	}
	for _, table := range Tables {
		n, err := copyTable(ctx, src, dst, table)
		if err != nil {
			return rep, fmt.Errorf("copy %s: %w", table, err)
		}
		rep.Rows[table] = n
	}
	if _, err := dst.Exec(ctx, `SELECT setval(pg_get_serial_sequence('credit_journal', 'seq'),
		COALESCE((SELECT max(seq) FROM credit_journal), 0) + 1, false)`); err != nil {
		return rep, err
	}
	if err := verify(ctx, src, dst, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// column is one target column and how a SQLite value becomes its value.
type column struct {
	name string
	typ  string // PostgreSQL's data_type
}

func columns(ctx context.Context, dst pgx.Tx, table string) ([]column, error) {
	rows, err := dst.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, err
	}
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (column, error) {
		var c column
		return c, r.Scan(&c.name, &c.typ)
	})
	if err == nil && len(cols) == 0 {
		err = fmt.Errorf("the target has no table %s", table)
	}
	return cols, err
}

// copyTable streams one table from SQLite into PostgreSQL with COPY.
func copyTable(ctx context.Context, src *sql.Tx, dst pgx.Tx, table string) (int64, error) {
	cols, err := columns(ctx, dst, table)
	if err != nil {
		return 0, err
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	rows, err := src.QueryContext(ctx, "SELECT "+strings.Join(names, ", ")+" FROM "+table)
	if err != nil {
		return 0, fmt.Errorf("read (the two schemas must match): %w", err)
	}
	defer rows.Close()
	return dst.CopyFrom(ctx, pgx.Identifier{table}, names, &rowSource{rows: rows, cols: cols})
}

// rowSource adapts SQLite rows to pgx.CopyFromSource, converting each
// value to its target column's type.
type rowSource struct {
	rows *sql.Rows
	cols []column
	vals []any
	err  error
}

func (s *rowSource) Next() bool {
	if !s.rows.Next() {
		return false
	}
	raw := make([]any, len(s.cols))
	ptrs := make([]any, len(s.cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := s.rows.Scan(ptrs...); err != nil {
		s.err = err
		return false
	}
	s.vals = make([]any, len(s.cols))
	for i, c := range s.cols {
		v, err := convert(raw[i], c.typ)
		if err != nil {
			s.err = fmt.Errorf("column %s: %w", c.name, err)
			return false
		}
		s.vals[i] = v
	}
	return true
}

func (s *rowSource) Values() ([]any, error) { return s.vals, nil }

func (s *rowSource) Err() error {
	if s.err != nil {
		return s.err
	}
	return s.rows.Err()
}

// convert turns a value SQLite stored into one for a PostgreSQL column:
// unix microseconds into a time, 0/1 into a boolean; text and bytes stay.
func convert(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "timestamp with time zone":
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("a time stored as %T, want unix microseconds", v)
		}
		return time.UnixMicro(n).UTC(), nil
	case "boolean":
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("a flag stored as %T, want 0 or 1", v)
		}
		return n != 0, nil
	case "bytea":
		switch b := v.(type) {
		case []byte:
			return b, nil
		case string:
			return []byte(b), nil
		}
		return nil, fmt.Errorf("bytes stored as %T", v)
	case "text":
		switch s := v.(type) {
		case string:
			return s, nil
		case []byte:
			return string(s), nil
		}
		return nil, fmt.Errorf("text stored as %T", v)
	}
	return v, nil
}

// verify compares every table's count and the ledger's sums on both sides.
func verify(ctx context.Context, src *sql.Tx, dst pgx.Tx, rep *Report) error {
	for _, table := range Tables {
		var a, b int64
		if err := src.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&a); err != nil {
			return err
		}
		if err := dst.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&b); err != nil {
			return err
		}
		if a != b || a != rep.Rows[table] {
			return fmt.Errorf("%s: %d rows in the source, %d copied, %d in the target", table, a, rep.Rows[table], b)
		}
	}
	const sums = `SELECT
		(SELECT COALESCE(SUM(balance_micros), 0) FROM credit_accounts),
		(SELECT COALESCE(SUM(held_micros), 0) FROM credit_accounts),
		(SELECT COALESCE(SUM(amount_micros), 0) FROM credit_journal),
		(SELECT COALESCE(MAX(seq), 0) FROM credit_journal)`
	var a, b Sums
	if err := src.QueryRowContext(ctx, sums).Scan(&a.Balance, &a.Held, &a.Journal, &a.LastSeq); err != nil {
		return err
	}
	if err := dst.QueryRow(ctx, sums).Scan(&b.Balance, &b.Held, &b.Journal, &b.LastSeq); err != nil {
		return err
	}
	if a != b {
		return fmt.Errorf("the ledger differs after the copy: source %+v, target %+v", a, b)
	}
	rep.Ledger = b
	return nil
}

// Print writes a report as the command shows it.
func (r Report) Print(w io.Writer) {
	var total int64
	for _, t := range Tables {
		fmt.Fprintf(w, "%-20s %8d\n", t, r.Rows[t])
		total += r.Rows[t]
	}
	fmt.Fprintf(w, "%-20s %8d\n", "total rows", total)
	fmt.Fprintf(w, "ledger: balances %d, held %d, journal sum %d, last entry %d (micro-credits), equal on both sides\n",
		r.Ledger.Balance, r.Ledger.Held, r.Ledger.Journal, r.Ledger.LastSeq)
}
