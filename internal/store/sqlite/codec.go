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

// optMicros encodes an optional time: the zero time is NULL.
func optMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

// fromMicros decodes a time column; NULL is the zero time.
func fromMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64).UTC()
}

// microsPtr encodes an optional time for the generated queries: the zero
// time is nil (NULL).
func microsPtr(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.UnixMicro()
	return &v
}

// fromMicrosPtr decodes a nullable time column as the generated queries
// read it: nil is the zero time.
func fromMicrosPtr(v *int64) time.Time {
	if v == nil {
		return time.Time{}
	}
	return time.UnixMicro(*v).UTC()
}

// optString passes "" to the generated queries as nil (NULL): an unset
// filter.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// orNow returns t, or the current time when t is zero.
func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return t
}

// nullString stores "" as NULL, for optional references.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// encodeStrings stores nil as NULL and anything else (empty included) as a
// JSON array, so nil and empty round-trip apart.
func encodeStrings(ss []string) (sql.NullString, error) {
	v, err := dialect.EncodeStrings(ss)
	if v == nil || err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: *v, Valid: true}, nil
}

func decodeStrings(v sql.NullString) ([]string, error) {
	if !v.Valid {
		return nil, nil
	}
	return dialect.DecodeStrings(&v.String)
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
