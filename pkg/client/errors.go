package client

import (
	"errors"
	"net/http"
)

// The kinds of error the API answers, one per HTTP status class the server
// uses. An *Error matches one of them with errors.Is, decided by its status
// code:
//
//	if errors.Is(err, client.ErrNotFound) { … }
var (
	ErrNotFound           = errors.New("not found")           // 404
	ErrInvalidArgument    = errors.New("invalid argument")    // 400
	ErrConflict           = errors.New("conflict")            // 409
	ErrFailedPrecondition = errors.New("failed precondition") // 412, 422
	ErrUnavailable        = errors.New("unavailable")         // 502, 503, 504
	ErrNotImplemented     = errors.New("not implemented")     // 501
	ErrPermissionDenied   = errors.New("permission denied")   // 403
	ErrUnauthenticated    = errors.New("unauthenticated")     // 401
	ErrResourceExhausted  = errors.New("resource exhausted")  // 413, 429
	ErrPaymentRequired    = errors.New("payment required")    // 402
	ErrInternal           = errors.New("internal error")      // any other 5xx
	ErrUnknown            = errors.New("unknown error")       // anything else
)

// kindOf maps an HTTP status to its kind: the SDK's one mapping back from
// the wire.
func kindOf(status int) error {
	switch status {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusBadRequest:
		return ErrInvalidArgument
	case http.StatusConflict:
		return ErrConflict
	case http.StatusPreconditionFailed, http.StatusUnprocessableEntity:
		return ErrFailedPrecondition
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return ErrUnavailable
	case http.StatusNotImplemented:
		return ErrNotImplemented
	case http.StatusForbidden:
		return ErrPermissionDenied
	case http.StatusUnauthorized:
		return ErrUnauthenticated
	case http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return ErrResourceExhausted
	case http.StatusPaymentRequired:
		return ErrPaymentRequired
	}
	if status >= 500 && status <= 599 {
		return ErrInternal
	}
	return ErrUnknown
}

// kindCodes are the codes of the kinds, for an error body that had none.
var kindCodes = map[error]string{
	ErrNotFound:           "not_found",
	ErrInvalidArgument:    "invalid_argument",
	ErrConflict:           "conflict",
	ErrFailedPrecondition: "failed_precondition",
	ErrUnavailable:        "unavailable",
	ErrNotImplemented:     "not_implemented",
	ErrPermissionDenied:   "permission_denied",
	ErrUnauthenticated:    "unauthenticated",
	ErrResourceExhausted:  "resource_exhausted",
	ErrPaymentRequired:    "payment_required",
	ErrInternal:           "internal",
}

// codeForStatus is the code of an error body that had none.
func codeForStatus(status int) string {
	if code, ok := kindCodes[kindOf(status)]; ok {
		return code
	}
	return "unknown"
}

// Error returns "code: message".
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// Is reports whether target is the kind of e's status code, so that
// errors.Is(err, ErrNotFound) works on an *Error.
func (e *Error) Is(target error) bool { return kindOf(e.StatusCode) == target }

// Kind returns the kind of e: one of the Err* sentinels.
func (e *Error) Kind() error { return kindOf(e.StatusCode) }

// setStreamStatus gives an error that a stream reported after its 2xx
// answer the status it stands for: 500 when internal, else 503.
func (e *Error) setStreamStatus() {
	e.StatusCode = http.StatusServiceUnavailable
	if e.Code == "internal" {
		e.StatusCode = http.StatusInternalServerError
	}
}

// IsCode reports whether err is, or wraps, an *Error with the given
// machine code, such as "runtime_has_no_sandbox".
func IsCode(err error, code string) bool {
	e, ok := errorAs(err)
	return ok && e.Code == code
}

// Code returns the machine code of err when it is, or wraps, an *Error,
// and "" otherwise.
func Code(err error) string {
	if e, ok := errorAs(err); ok {
		return e.Code
	}
	return ""
}

// IsNotFound reports whether err is a not-found answer.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsConflict reports whether err is a conflict answer, such as a runtime
// in the wrong status for an action.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }
