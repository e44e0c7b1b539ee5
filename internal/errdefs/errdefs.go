// Package errdefs is paddock's one error taxonomy.
//
// Every error that crosses a boundary (store, provider, service, API, agent
// RPC, SDK) belongs to one of the kinds below. Kinds are sentinel errors
// matched with errors.Is; never match an error's text.
//
// An error that a client may see carries a public Code and Message apart from
// its cause (see Error). The cause is logged, never sent.
package errdefs

import (
	"errors"
	"fmt"
	"time"
)

// The kinds. Wrap them with %w or build an *Error with one of the
// constructors below.
var (
	ErrNotFound           = errors.New("not found")
	ErrInvalidArgument    = errors.New("invalid argument")
	ErrConflict           = errors.New("conflict")
	ErrFailedPrecondition = errors.New("failed precondition")
	ErrUnavailable        = errors.New("unavailable")
	ErrNotImplemented     = errors.New("not implemented")
	ErrPermissionDenied   = errors.New("permission denied")
	ErrUnauthenticated    = errors.New("unauthenticated")
	ErrResourceExhausted  = errors.New("resource exhausted")
	ErrPaymentRequired    = errors.New("payment required")
)

// Error is an error with a public face: a stable machine-readable Code and a
// Message safe to show to a client. Cause, if any, is for logs only.
type Error struct {
	Kind    error  // one of the Err* kinds above
	Code    string // stable, snake_case, e.g. "runtime_has_no_sandbox"
	Message string // human-readable, safe to return to the caller
	Cause   error  // internal detail; never sent to a client
	// RetryAfter, when set, tells the client when to try again (HTTP's
	// Retry-After).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return e.Code + ": " + e.Message
}

// Is reports whether target is this error's kind, so errors.Is(err,
// ErrNotFound) works on an *Error.
func (e *Error) Is(target error) bool { return e.Kind == target }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// WithCause returns a copy of e carrying cause.
func (e *Error) WithCause(cause error) *Error {
	c := *e
	c.Cause = cause
	return &c
}

// WithRetryAfter returns a copy of e telling the client to retry after d.
func (e *Error) WithRetryAfter(d time.Duration) *Error {
	c := *e
	c.RetryAfter = d
	return &c
}

func newError(kind error, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns a public not-found error.
func NotFound(code, format string, args ...any) *Error {
	return newError(ErrNotFound, code, format, args...)
}

// InvalidArgument returns a public invalid-argument error.
func InvalidArgument(code, format string, args ...any) *Error {
	return newError(ErrInvalidArgument, code, format, args...)
}

// Conflict returns a public conflict error.
func Conflict(code, format string, args ...any) *Error {
	return newError(ErrConflict, code, format, args...)
}

// FailedPrecondition returns a public failed-precondition error.
func FailedPrecondition(code, format string, args ...any) *Error {
	return newError(ErrFailedPrecondition, code, format, args...)
}

// Unavailable returns a public unavailable error.
func Unavailable(code, format string, args ...any) *Error {
	return newError(ErrUnavailable, code, format, args...)
}

// NotImplemented returns a public not-implemented error.
func NotImplemented(code, format string, args ...any) *Error {
	return newError(ErrNotImplemented, code, format, args...)
}

// PermissionDenied returns a public permission-denied error.
func PermissionDenied(code, format string, args ...any) *Error {
	return newError(ErrPermissionDenied, code, format, args...)
}

// Unauthenticated returns a public unauthenticated error.
func Unauthenticated(code, format string, args ...any) *Error {
	return newError(ErrUnauthenticated, code, format, args...)
}

// ResourceExhausted returns a public resource-exhausted error.
func ResourceExhausted(code, format string, args ...any) *Error {
	return newError(ErrResourceExhausted, code, format, args...)
}

// PaymentRequired returns a public payment-required error.
func PaymentRequired(code, format string, args ...any) *Error {
	return newError(ErrPaymentRequired, code, format, args...)
}

// Public returns the *Error in err's chain, if any.
func Public(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// PublicMessage is the message err may show a client: the public message
// of the *Error in its chain, or fallback when it has none.
func PublicMessage(err error, fallback string) string {
	if e, ok := Public(err); ok {
		return e.Message
	}
	return fallback
}

// IsNotFound reports whether err is of kind ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsConflict reports whether err is of kind ErrConflict.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// Kinds lists every kind, for mapping tables and tests.
var Kinds = []error{
	ErrNotFound, ErrInvalidArgument, ErrConflict, ErrFailedPrecondition,
	ErrUnavailable, ErrNotImplemented, ErrPermissionDenied,
	ErrUnauthenticated, ErrResourceExhausted, ErrPaymentRequired,
}

// KindOf returns the kind of the outermost error in err's chain that has
// one (an *Error, or a kind itself wrapped with %w), or nil. The outermost
// wins: a conflict whose cause is a not-found is a conflict. In a joined
// error, the first member with a kind decides.
func KindOf(err error) error {
	for err != nil {
		if e, ok := err.(*Error); ok {
			return e.Kind
		}
		for _, k := range Kinds {
			if err == k {
				return k
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if k := KindOf(e); k != nil {
					return k
				}
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}
