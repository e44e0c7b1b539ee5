package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paddockhq/paddock/internal/store/dialect"
)

// Column encodings: how store values become query arguments and rows
// become store values.

// stamp is t as the store keeps it: UTC, to the microsecond.
func stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// orNow is the time to store for t: now when t is zero.
func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return stamp(t)
}

// optTime stores a zero time as NULL.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	s := stamp(t)
	return &s
}

// fromOptTime reads what optTime wrote: NULL is the zero time.
func fromOptTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// optString stores "" as NULL, for optional references and addresses.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// fromOptString reads what optString wrote: NULL is "".
func fromOptString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// mapRows converts generated rows to store values; no rows is nil.
func mapRows[R, T any](rows []R, conv func(R) T) []T {
	if len(rows) == 0 {
		return nil
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = conv(r)
	}
	return out
}

// violated names the constraint err violated, "" when err is no
// constraint violation. It lets a method say which unique key another row
// holds without a second query, which an aborted transaction could not
// run.
func violated(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.ConstraintName
	}
	return ""
}

// errEncode wraps a failure to encode a column.
func errEncode(res dialect.Resource, column string, err error) error {
	return fmt.Errorf("postgres store: encode %s.%s: %w", res, column, err)
}

// errDecode wraps a failure to decode a stored column.
func errDecode(res dialect.Resource, column string, err error) error {
	return fmt.Errorf("postgres store: decode %s.%s: %w", res, column, err)
}

// blob stores an empty byte slice as NULL, and reads NULL back as nil.
func blob(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
