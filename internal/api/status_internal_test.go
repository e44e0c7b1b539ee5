package api

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// TestStatusOf maps every kind to its status, alone, wrapped and as the
// outer error around every other kind: the outermost kind decides, never a
// cause inside it.
func TestStatusOf(t *testing.T) {
	want := map[error]int{
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
	if len(want) != len(errdefs.Kinds) {
		t.Fatalf("the table covers %d kinds; errdefs has %d", len(want), len(errdefs.Kinds))
	}
	for _, outer := range errdefs.Kinds {
		status := want[outer]
		pub := &errdefs.Error{Kind: outer, Code: "some_code", Message: "m"}
		for name, err := range map[string]error{
			"bare kind":          outer,
			"wrapped kind":       fmt.Errorf("doing a thing: %w", outer),
			"public error":       pub,
			"wrapped public":     fmt.Errorf("doing a thing: %w", pub),
			"public, no message": &errdefs.Error{Kind: outer, Code: "c"},
		} {
			if got := statusOf(err); got != status {
				t.Errorf("%v, %s: status %d, want %d", outer, name, got, status)
			}
		}
		for _, inner := range errdefs.Kinds {
			err := pub.WithCause(fmt.Errorf("cause: %w", errdefs.NotFound("inner_code", "x").WithCause(inner)))
			if got := statusOf(err); got != status {
				t.Errorf("%v around %v: status %d, want the outer %d", outer, inner, got, status)
			}
		}
	}
	for code, status := range codeStatus {
		if got := statusOf(errdefs.InvalidArgument(code, "x")); got != status {
			t.Errorf("code %s: status %d, want %d", code, got, status)
		}
	}
	if got := statusOf(fmt.Errorf("no kind at all")); got != http.StatusInternalServerError {
		t.Errorf("an error without a kind: %d, want 500", got)
	}
}
