package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

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
	if unreachable(err) {
		return errdefs.Unavailable("store_unavailable", "the database cannot be reached; retry").WithCause(err)
	}
	return fmt.Errorf("postgres store: %s: %w", op, err)
}

// wrap classifies an error that concerns no particular record.
func wrap(op string, err error) error { return classify(op, "record", err) }

// unreachable reports whether err is the database being out of reach
// rather than refusing the statement: a connection that cannot be made or
// broke, a server shutting down, a timeout. The caller sees 503, not 500,
// and may retry once the database is back.
func unreachable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &ce), errors.As(err, &ne), pgconn.Timeout(err), pgconn.SafeToRetry(err),
		errors.Is(err, pgx.ErrTxClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &pe):
		// admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections
		return pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300"
	}
	return false
}
