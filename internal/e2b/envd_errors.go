package e2b

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// connectCodes are the Connect codes of the statuses envd's gateway
// answers, for a Connect client (the SDK maps them to its errors:
// unauthenticated → AuthenticationError, resource_exhausted →
// RateLimitError, unavailable → its sandbox-timeout error).
var connectCodes = map[int]string{
	http.StatusBadRequest:            "invalid_argument",
	http.StatusUnauthorized:          "unauthenticated",
	http.StatusForbidden:             "permission_denied",
	http.StatusNotFound:              "unimplemented",
	http.StatusConflict:              "aborted",
	http.StatusPaymentRequired:       "resource_exhausted",
	http.StatusRequestEntityTooLarge: "resource_exhausted",
	http.StatusTooManyRequests:       "resource_exhausted",
	http.StatusBadGateway:            "unavailable",
	http.StatusServiceUnavailable:    "unavailable",
}

// envdFail answers an envd request that did not reach the agent, in the
// shape its client reads: a sandbox not running, or whose agent does not
// answer, as E2B's proxy answers (502, {"sandboxId", "message", "code"});
// anything else as envd does, {"code": <status>, "message"} on /health
// and /files, a Connect error on a Connect method.
func (g *Gateway) envdFail(w http.ResponseWriter, r *http.Request, sandboxID string, err error) {
	ctx := r.Context()
	var gone *goneError
	var unreachable *unreachableError
	switch {
	case errors.As(err, &gone):
		g.o.Logger.InfoContext(ctx, "envd: sandbox not running", "sandbox", sandboxID, "why", gone.why)
		writeJSON(w, http.StatusBadGateway, map[string]any{"sandboxId": sandboxID, "message": "The sandbox was not found", "code": http.StatusBadGateway})
		return
	case errors.As(err, &unreachable):
		g.o.Logger.InfoContext(ctx, "envd: agent unreachable", "sandbox", sandboxID, "err", unreachable.cause)
		writeJSON(w, http.StatusBadGateway, map[string]any{"sandboxId": sandboxID, "message": "The sandbox is running but port is not open", "port": EnvdPort, "code": http.StatusBadGateway})
		return
	}
	status, _ := g.o.Door.Status(err)
	msg := errdefs.PublicMessage(err, http.StatusText(status))
	if status == http.StatusInternalServerError {
		msg = "internal error; the server logged the details (request " + g.o.Door.RequestID(ctx) + ")"
		g.o.Logger.ErrorContext(ctx, "envd failed", "sandbox", sandboxID, "err", err)
	}
	if pe, ok := errdefs.Public(err); ok && pe.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(pe.RetryAfter.Seconds()))))
	}
	if isConnectPath(r.URL.Path) {
		code, ok := connectCodes[status]
		if !ok {
			code = "internal"
		}
		writeJSON(w, status, map[string]any{"code": code, "message": msg})
		return
	}
	writeJSON(w, status, map[string]any{"code": status, "message": msg})
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v) // maps of strings and numbers: cannot fail
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
