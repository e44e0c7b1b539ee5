package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/pkg/client"
)

type requestIDKey struct{}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer (flush,
// hijack for WebSockets).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// withRequest gives every request an id, logs it, and turns a panic into a
// 500 with the one error body.
func (a *API) withRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := newRequestID()
		ctx := logs.With(context.WithValue(r.Context(), requestIDKey{}, id), logs.KeyRequest, id)
		// Before any credential is checked (live.hold).
		ctx, unmark := a.live.mark(ctx)
		defer unmark()
		r = r.WithContext(ctx)
		w.Header().Set("X-Request-Id", id)
		rec := &statusRecorder{ResponseWriter: w}
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				a.logger.ErrorContext(ctx, "handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(ctx, rec, a.logger, fmt.Errorf("panic: %v", p))
				}
			}
			dur := time.Since(start)
			a.metrics.Request(r.Pattern, r.Method, rec.status, dur)
			a.logger.DebugContext(ctx, "request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "dur", dur, "request_id", id, "client", a.clientAddr(r))
		}()
		next.ServeHTTP(rec, r)
	})
}

// bearerToken returns the credentials of an Authorization header in the
// Bearer scheme, whose name is case-insensitive (RFC 9110, section 11.1).
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// unmatched answers requests no route matched with the one error body
// instead of ServeMux's plain text.
type unmatched struct {
	http.ResponseWriter
	r       *http.Request
	a       *API
	written bool
}

func (u *unmatched) WriteHeader(code int) {
	if u.written {
		return
	}
	u.written = true
	ctx := u.r.Context()
	if code == http.StatusMethodNotAllowed {
		writeJSONError(ctx, u.ResponseWriter, code, "method_not_allowed", fmt.Sprintf("%s is not allowed on %s", u.r.Method, u.r.URL.Path))
		return
	}
	writeJSONError(ctx, u.ResponseWriter, http.StatusNotFound, "route_not_found", "no route matches "+u.r.Method+" "+u.r.URL.Path)
}

func (u *unmatched) Write(b []byte) (int, error) {
	if !u.written {
		u.WriteHeader(http.StatusNotFound)
	}
	return len(b), nil
}

func writeJSONError(ctx context.Context, w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, client.Error{Code: code, Message: msg, RequestID: requestIDFrom(ctx)})
}
