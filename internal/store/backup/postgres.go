package backup

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresTx is a transaction on a PostgreSQL store.
type postgresTx struct{ tx pgx.Tx }

// PostgresTx makes tx, a transaction on a PostgreSQL store, a Tx.
func PostgresTx(tx pgx.Tx) Tx { return postgresTx{tx} }

func (p postgresTx) columns(ctx context.Context, table string) ([]Column, error) {
	rows, err := p.tx.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, err
	}
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Column, error) {
		var name, typ string
		if err := r.Scan(&name, &typ); err != nil {
			return Column{}, err
		}
		kind, ok := postgresKinds[typ]
		if !ok {
			return Column{}, fmt.Errorf("column %s.%s has the type %s, which backups do not carry", table, name, typ)
		}
		return Column{Name: name, Kind: kind}, nil
	})
	if err == nil && len(cols) == 0 {
		err = fmt.Errorf("the store has no table %s", table)
	}
	return cols, err
}

// postgresKinds are the kinds of PostgreSQL's data types.
var postgresKinds = map[string]Kind{
	"bigint": KindInt, "integer": KindInt, "smallint": KindInt,
	"text": KindText, "character varying": KindText,
	"bytea":                    KindBytes,
	"timestamp with time zone": KindTime,
	"boolean":                  KindBool,
}

func (p postgresTx) rows(ctx context.Context, table string, cols []Column) (Rows, func(), error) {
	rows, err := p.tx.Query(ctx, "SELECT "+names(cols)+" FROM "+table)
	if err != nil {
		return nil, nil, err
	}
	return &postgresRows{rows: rows, cols: cols}, rows.Close, nil
}

func (p postgresTx) insert(ctx context.Context, table string, cols []Column, rows Rows) (int64, error) {
	return p.tx.CopyFrom(ctx, pgx.Identifier{table}, columnNames(cols), &copySource{Rows: rows, cols: cols})
}

func (p postgresTx) queryRow(ctx context.Context, query string, dest ...any) error {
	return p.tx.QueryRow(ctx, query).Scan(dest...)
}

// loaded makes the journal's sequence continue after its last entry.
func (p postgresTx) loaded(ctx context.Context) error {
	_, err := p.tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence('credit_journal', 'seq'),
		COALESCE((SELECT max(seq) FROM credit_journal), 0) + 1, false)`)
	return err
}

// postgresRows reads PostgreSQL's values into the neutral form.
type postgresRows struct {
	rows pgx.Rows
	cols []Column
	vals []any
	err  error
}

func (r *postgresRows) Next() bool {
	if r.err != nil || !r.rows.Next() {
		return false
	}
	raw, err := r.rows.Values()
	if err != nil {
		r.err = err
		return false
	}
	r.vals = make([]any, len(r.cols))
	for i, c := range r.cols {
		v := raw[i]
		switch x := v.(type) {
		case time.Time:
			v = x.UnixMicro()
		case int32:
			v = int64(x)
		case int16:
			v = int64(x)
		}
		if r.vals[i], r.err = convert(v, c.Kind); r.err != nil {
			r.err = fmt.Errorf("column %s: %w", c.Name, r.err)
			return false
		}
	}
	return true
}

func (r *postgresRows) Values() []any { return r.vals }

func (r *postgresRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.rows.Err()
}

// copySource feeds neutral rows to COPY, a time as a time.
type copySource struct {
	Rows
	cols []Column
}

func (s *copySource) Values() ([]any, error) {
	vals := s.Rows.Values()
	out := make([]any, len(vals))
	for i, v := range vals {
		if n, ok := v.(int64); ok && s.cols[i].Kind == KindTime {
			out[i] = time.UnixMicro(n).UTC()
			continue
		}
		out[i] = v
	}
	return out, nil
}

func columnNames(cols []Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}
