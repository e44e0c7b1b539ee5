package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store/dialect"
)

// classify maps an error from a statement on res to an errdefs kind, as
// the SQLite dialect does for its own driver's codes. Context errors stay
// matchable with errors.Is; a serialization failure keeps its PgError in
// the chain, so InTx can see it and run the transaction again.
func classify(op string, res dialect.Resource, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return dialect.NotFound(res, nil)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("postgres store: %s: %w", op, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation
			return dialect.Exists(res, err)
		case "23503": // foreign_key_violation
			return dialect.ReferenceMissing(res, err)
		case "23502", "23514", "22P02": // not_null, check, invalid text representation
			return dialect.Invalid(res, err)
		case "40001", "40P01", "55P03": // serialization failure, deadlock, lock not available
			return errdefs.Unavailable("store_busy", "the database is busy; retry").WithCause(err)
		case "53100": // disk_full
			return errdefs.ResourceExhausted("store_full", "the database disk is full").WithCause(err)
		case "25006": // read_only_sql_transaction
			return errdefs.FailedPrecondition("store_read_only", "the database is read-only").WithCause(err)
		}
	}
	if pgconn.SafeToRetry(err) || errors.Is(err, pgx.ErrTxClosed) {
		return errdefs.Unavailable("store_unavailable", "the database connection failed; retry").WithCause(err)
	}
	return fmt.Errorf("postgres store: %s: %w", op, err)
}

// wrap classifies an error that concerns no particular record.
func wrap(op string, err error) error { return classify(op, "record", err) }
