package backup

import (
	"context"
	"fmt"
)

// Tables are the tables a backup and a store copy carry, parents before
// children.
var Tables = []string{
	"meta", "orgs", "users", "workspaces", "projects", "runtimes", "sandboxes",
	"api_keys", "credit_accounts", "credit_journal", "workspace_members", "org_members",
	"warm_sandboxes", "egress_decisions", "secrets", "capability_versions",
	"capability_bindings", "sessions", "session_events", "auth_challenges",
	"auth_sessions", "ssh_keys", "invitations", "e2b_sandboxes", "templates", "tasks", "snapshots",
	"workflows", "workflow_runs", "template_builds", "org_images", "worlds", "hosts",
}

// Skipped are the tables left behind on purpose: each store keeps its own
// schema history, and leases, rate buckets and live holds belong to the
// replicas of the old store.
var Skipped = []string{"schema_migrations", "leases", "rate_buckets", "live_holds"}

// Kind is a column's type, the same in both dialects. Values travel in a
// neutral form: int64 for KindInt and KindTime (unix microseconds),
// string, []byte, bool, or nil for NULL.
type Kind string

// The kinds of column. SQLite declares only the first three: its times
// are KindInt and its flags KindInt holding 0 or 1.
const (
	KindInt   Kind = "int"
	KindText  Kind = "text"
	KindBytes Kind = "bytes"
	KindTime  Kind = "time"
	KindBool  Kind = "bool"
)

// Column is one column of a table.
type Column struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
}

// Rows is a stream of one table's rows in the neutral form.
type Rows interface {
	Next() bool
	Values() []any
	Err() error
}

// source is where a table's rows come from: a store or a backup file.
type source interface {
	// columns lists a table's columns in the source's order.
	columns(ctx context.Context, table string) ([]Column, error)
	// rows reads every row of a table, values in cols' order; done
	// releases what the read holds.
	rows(ctx context.Context, table string, cols []Column) (rows Rows, done func(), err error)
}

// Tx is one transaction on one store, of either dialect: what a backup
// reads and a restore or a copy writes. SQLiteTx and PostgresTx make one.
type Tx interface {
	source
	// insert writes rows, already in cols' order and kinds.
	insert(ctx context.Context, table string, cols []Column, rows Rows) (int64, error)
	// queryRow runs a query without arguments that returns one row.
	queryRow(ctx context.Context, query string, dest ...any) error
	// loaded runs after every table is written.
	loaded(ctx context.Context) error
}

// Sums are the ledger's totals, compared on both sides of a copy and
// between a backup's manifest and its restore.
type Sums struct {
	Balance int64 `json:"balance_micros"`
	Held    int64 `json:"held_micros"`
	Journal int64 `json:"journal_micros"`
	LastSeq int64 `json:"last_seq"`
}

// LedgerSums reads the ledger's totals.
func LedgerSums(ctx context.Context, tx Tx) (Sums, error) {
	const q = `SELECT
		(SELECT COALESCE(SUM(balance_micros), 0) FROM credit_accounts),
		(SELECT COALESCE(SUM(held_micros), 0) FROM credit_accounts),
		(SELECT COALESCE(SUM(amount_micros), 0) FROM credit_journal),
		(SELECT COALESCE(MAX(seq), 0) FROM credit_journal)`
	var s Sums
	err := tx.queryRow(ctx, q, &s.Balance, &s.Held, &s.Journal, &s.LastSeq)
	return s, err
}

// Counts reads every table's row count.
func Counts(ctx context.Context, tx Tx) (map[string]int64, error) {
	counts := map[string]int64{}
	for _, table := range Tables {
		var n int64
		if err := tx.queryRow(ctx, "SELECT count(*) FROM "+table, &n); err != nil {
			return nil, fmt.Errorf("count %s: %w", table, err)
		}
		counts[table] = n
	}
	return counts, nil
}

// CheckEmpty refuses a store that already holds records: a copy or a
// restore moves an installation, it does not merge two. why ends the
// error's message.
func CheckEmpty(ctx context.Context, tx Tx, why string) error {
	counts, err := Counts(ctx, tx)
	if err != nil {
		return err
	}
	for _, table := range Tables {
		if n := counts[table]; n > 0 {
			return storeNotEmpty(table, n, why)
		}
	}
	return nil
}

// CopyTable streams one table from src into dst, converting each value to
// its target column's kind, and returns how many rows it wrote.
func CopyTable(ctx context.Context, src, dst Tx, table string) (int64, error) {
	return copyTable(ctx, src, dst, table)
}

func copyTable(ctx context.Context, src source, dst Tx, table string) (int64, error) {
	cols, err := dst.columns(ctx, table)
	if err != nil {
		return 0, err
	}
	srcCols, err := src.columns(ctx, table)
	if err != nil {
		return 0, err
	}
	srcCols, err = pick(srcCols, cols)
	if err != nil {
		return 0, err
	}
	rows, done, err := src.rows(ctx, table, srcCols)
	if err != nil {
		return 0, err
	}
	defer done()
	return dst.insert(ctx, table, cols, converted(rows, srcCols, cols))
}

// Loaded finishes a store after its tables were written (PostgreSQL's
// journal sequence continues after the last entry).
func Loaded(ctx context.Context, tx Tx) error { return tx.loaded(ctx) }

// pick returns the source's columns named as want's, in want's order; a
// column the source lacks means the two schemas differ.
func pick(have, want []Column) ([]Column, error) {
	byName := make(map[string]Column, len(have))
	for _, c := range have {
		byName[c.Name] = c
	}
	out := make([]Column, len(want))
	for i, w := range want {
		c, ok := byName[w.Name]
		if !ok {
			return nil, fmt.Errorf("the source has no column %s (the two schemas must match)", w.Name)
		}
		out[i] = c
	}
	return out, nil
}

// convertedRows converts each row from the source's kinds to the target's.
type convertedRows struct {
	Rows
	from, to []Column
	vals     []any
	err      error
}

func converted(rows Rows, from, to []Column) Rows {
	return &convertedRows{Rows: rows, from: from, to: to}
}

func (r *convertedRows) Next() bool {
	if r.err != nil || !r.Rows.Next() {
		return false
	}
	in := r.Rows.Values()
	r.vals = make([]any, len(r.to))
	for i, c := range r.to {
		v, err := convert(in[i], c.Kind)
		if err != nil {
			r.err = fmt.Errorf("column %s: %w", c.Name, err)
			return false
		}
		r.vals[i] = v
	}
	return true
}

func (r *convertedRows) Values() []any { return r.vals }

func (r *convertedRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.Rows.Err()
}

// convert turns a neutral value into one of kind to: a flag is a boolean
// or 0/1, a time is unix microseconds, text and bytes convert into each
// other.
func convert(v any, to Kind) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch to {
	case KindInt, KindTime:
		switch x := v.(type) {
		case int64:
			return x, nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case KindBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			return x != 0, nil
		}
	case KindText:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case KindBytes:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	default:
		return nil, fmt.Errorf("unknown kind %q", to)
	}
	return nil, fmt.Errorf("a %T where a %s belongs", v, to)
}
