package sqlite

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/store/dialect"
)

// micros encodes a required time as unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicro decodes a required time column.
func fromMicro(v int64) time.Time { return time.UnixMicro(v).UTC() }

// boolInt encodes a boolean as SQLite stores it: 1 or 0.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// fromOptString decodes an optional text column; NULL is "".
func fromOptString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// optString stores "" as NULL, for optional filters.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optTime encodes an optional time as unix microseconds: the zero time is
// NULL.
func optTime(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.UnixMicro()
	return &v
}

// fromOptTime decodes an optional time column; NULL is the zero time.
func fromOptTime(p *int64) time.Time {
	if p == nil {
		return time.Time{}
	}
	return fromMicro(*p)
}

// orNow returns t, or the current time when t is zero.
func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return t
}

// blob stores an empty byte slice as NULL.
func blob(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// required returns an invalid-argument error naming the first empty field.
func required(res resource, nameValues ...string) error { return dialect.Required(res, nameValues...) }

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(rowScanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// mapRows maps generated rows in order with conv; no rows is nil.
func mapRows[R, T any](rows []R, conv func(R) (T, error)) ([]T, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		v, err := conv(r)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// total lifts a conversion that cannot fail to the form mapRows takes.
func total[R, T any](conv func(R) T) func(R) (T, error) {
	return func(r R) (T, error) { return conv(r), nil }
}

// placeholders returns "?, ?, …" with n marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// errEncode wraps a failure to encode a column.
func errEncode(res resource, column string, err error) error {
	return fmt.Errorf("sqlite store: encode %s.%s: %w", res, column, err)
}

// errDecode wraps a failure to decode a stored column.
func errDecode(res resource, column string, err error) error {
	return fmt.Errorf("sqlite store: decode %s.%s: %w", res, column, err)
}

// affected is the outcome of a write meant for one record that changed n
// rows: err classified, or not found when it changed none.
func affected(op string, res resource, n int64, err error) error {
	if err != nil {
		return classify(op, res, err)
	}
	if n == 0 {
		return notFound(res, nil)
	}
	return nil
}
