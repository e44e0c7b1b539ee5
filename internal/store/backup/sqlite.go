package backup

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// sqliteTx is a transaction on a SQLite store.
type sqliteTx struct{ tx *sql.Tx }

// SQLiteTx makes tx, a transaction on a SQLite store, a Tx.
func SQLiteTx(tx *sql.Tx) Tx { return sqliteTx{tx} }

func (s sqliteTx) columns(ctx context.Context, table string) ([]Column, error) {
	rows, err := s.tx.QueryContext(ctx, "SELECT name, type FROM pragma_table_info('"+table+"') ORDER BY cid")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []Column
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, err
		}
		cols = append(cols, Column{Name: name, Kind: sqliteKind(typ)})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("the store has no table %s", table)
	}
	return cols, nil
}

// sqliteKind is the kind of a column SQLite declares as typ (its type
// affinity).
func sqliteKind(typ string) Kind {
	typ = strings.ToUpper(typ)
	switch {
	case strings.Contains(typ, "INT"):
		return KindInt
	case strings.Contains(typ, "BLOB"):
		return KindBytes
	}
	return KindText
}

func (s sqliteTx) rows(ctx context.Context, table string, cols []Column) (Rows, func(), error) {
	rows, err := s.tx.QueryContext(ctx, "SELECT "+names(cols)+" FROM "+table)
	if err != nil {
		return nil, nil, err
	}
	return &sqliteRows{rows: rows, cols: cols}, func() { _ = rows.Close() }, nil
}

func (s sqliteTx) insert(ctx context.Context, table string, cols []Column, rows Rows) (int64, error) {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	stmt, err := s.tx.PrepareContext(ctx, "INSERT INTO "+table+" ("+names(cols)+") VALUES ("+marks+")")
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	var n int64
	for rows.Next() {
		if _, err := stmt.ExecContext(ctx, rows.Values()...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

func (s sqliteTx) queryRow(ctx context.Context, query string, dest ...any) error {
	return s.tx.QueryRowContext(ctx, query).Scan(dest...)
}

func (s sqliteTx) loaded(context.Context) error { return nil }

// sqliteRows reads SQLite's values into the neutral form.
type sqliteRows struct {
	rows *sql.Rows
	cols []Column
	vals []any
	err  error
}

func (r *sqliteRows) Next() bool {
	if r.err != nil || !r.rows.Next() {
		return false
	}
	raw := make([]any, len(r.cols))
	ptrs := make([]any, len(r.cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if r.err = r.rows.Scan(ptrs...); r.err != nil {
		return false
	}
	r.vals = make([]any, len(r.cols))
	for i, c := range r.cols {
		if r.vals[i], r.err = convert(raw[i], c.Kind); r.err != nil {
			r.err = fmt.Errorf("column %s: %w", c.Name, r.err)
			return false
		}
	}
	return true
}

func (r *sqliteRows) Values() []any { return r.vals }

func (r *sqliteRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.rows.Err()
}

// names lists cols' names for a statement.
func names(cols []Column) string { return strings.Join(columnNames(cols), ", ") }
