package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/pkg/client"
)

// codeStatus refines the status of a few public codes that HTTP names more
// precisely than their kind does.
var codeStatus = map[string]int{
	"body_too_large":         http.StatusRequestEntityTooLarge,
	"unsupported_media_type": http.StatusUnsupportedMediaType,
	// A template build's context past the installation's limit.
	"build_context_too_large": http.StatusRequestEntityTooLarge,
}

// kindStatus is the HTTP status of each kind.
var kindStatus = map[error]int{
	errdefs.ErrNotFound:           http.StatusNotFound,
	errdefs.ErrInvalidArgument:    http.StatusBadRequest,
	errdefs.ErrConflict:           http.StatusConflict,
	errdefs.ErrFailedPrecondition: http.StatusUnprocessableEntity,
	errdefs.ErrUnavailable:        http.StatusServiceUnavailable,
	errdefs.ErrNotImplemented:     http.StatusNotImplemented,
	errdefs.ErrPermissionDenied:   http.StatusForbidden,
	errdefs.ErrUnauthenticated:    http.StatusUnauthorized,
	errdefs.ErrResourceExhausted:  http.StatusTooManyRequests,
	errdefs.ErrPaymentRequired:    http.StatusPaymentRequired,
}

// statusOf maps an error to its HTTP status: the one place this happens.
// The status comes from the outermost error that has a kind — the public
// code the client sees — never from a cause wrapped inside it.
func statusOf(err error) int {
	if pe, ok := errdefs.Public(err); ok {
		if s, ok := codeStatus[pe.Code]; ok {
			return s
		}
	}
	if s, ok := kindStatus[errdefs.KindOf(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// genericCodes name an error that has a kind but no public face.
var genericCodes = map[int]string{
	http.StatusNotFound:            "not_found",
	http.StatusBadRequest:          "invalid_argument",
	http.StatusConflict:            "conflict",
	http.StatusUnprocessableEntity: "failed_precondition",
	http.StatusServiceUnavailable:  "unavailable",
	http.StatusNotImplemented:      "not_implemented",
	http.StatusForbidden:           "permission_denied",
	http.StatusUnauthorized:        "unauthenticated",
	http.StatusTooManyRequests:     "resource_exhausted",
	http.StatusPaymentRequired:     "payment_required",

	http.StatusRequestEntityTooLarge: "body_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
}

// writeError writes the one JSON error body. An error without a public face
// is logged with its cause and answered with a generic message: internal
// text never reaches a client.
func writeError(ctx context.Context, w http.ResponseWriter, logger *slog.Logger, err error) {
	if pe, ok := errdefs.Public(err); ok && pe.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(pe.RetryAfter.Seconds()))))
	}
	status, body := errorBody(ctx, logger, err)
	writeJSON(w, status, body)
}

// errorBody is err's status and the one error body that says it, logged
// as writeError logs it: also for an error answered inside another body
// (a project's start_error).
func errorBody(ctx context.Context, logger *slog.Logger, err error) (int, client.Error) {
	status := statusOf(err)
	body := client.Error{RequestID: requestIDFrom(ctx)}
	if pe, ok := errdefs.Public(err); ok {
		body.Code, body.Message = pe.Code, pe.Message
		if pe.Cause != nil {
			logger.InfoContext(ctx, "request failed", "code", pe.Code, "status", status, "err", err)
		}
	} else {
		body.Code = genericCodes[status]
		body.Message = http.StatusText(status)
		if status == http.StatusInternalServerError {
			body.Code = "internal"
			body.Message = "internal error; the server logged the details under this request id"
		}
		logger.ErrorContext(ctx, "request failed", "status", status, "err", err)
	}
	return status, body
}

// fail answers err with the one error body. A request whose context ended
// (the client went away, or the server is shutting down) is not a failure
// on this side: it answers 503 request_cancelled without logging an error
// — to no one when the client has gone, and to a draining client
// otherwise, which may retry.
func (a *API) fail(ctx context.Context, w http.ResponseWriter, err error) {
	var maxErr *http.MaxBytesError
	if _, public := errdefs.Public(err); !public && errors.As(err, &maxErr) {
		// A body streamed on (a file, stdin) past the route's limit.
		err = bodyTooLarge(maxErr)
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		a.logger.DebugContext(ctx, "request ended before its answer", "err", err)
		err = errdefs.Unavailable("request_cancelled", "the request ended before it was answered; retry").WithCause(err)
	}
	writeError(ctx, w, a.logger, err)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
