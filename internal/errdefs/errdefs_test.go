package errdefs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
)

func TestPublicMessage(t *testing.T) {
	public := errdefs.NotFound("thing_not_found", "thing %s not found", "x").WithCause(errors.New("driver: secret detail"))
	for _, tc := range []struct {
		err  error
		want string
	}{
		{public, "thing x not found"},
		{fmt.Errorf("wrapped: %w", public), "thing x not found"},
		{errors.New("driver: secret detail"), "fallback"},
	} {
		if got := errdefs.PublicMessage(tc.err, "fallback"); got != tc.want {
			t.Errorf("PublicMessage(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
