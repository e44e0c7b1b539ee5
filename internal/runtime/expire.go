package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// PauseIfExpired pauses a running runtime whose sandbox's expiry window has
// passed at now, with pause_reason timeout: never killed with work in it.
// It reports whether it paused. A keepalive or activity that extended the
// window first wins: the check is made under the runtime's lock, against
// this process's activity record (see activity.go). An operation still in
// flight (an attached exec, an open terminal) keeps it running, unless the
// runtime's maximum lifetime has passed. A window that activity moved is
// written to the row.
func (s *Service) PauseIfExpired(ctx context.Context, runtimeID string, now time.Time) (bool, error) {
	paused := false
	_, err := s.transition(ctx, runtimeID, "pause", store.RuntimeRunning, func(ctx context.Context, p provider.Provider, rt *store.Runtime, sb *store.Sandbox) error {
		exp, held := s.effectiveExpiry(*rt, *sb)
		end := deadline(*rt, *sb)
		if overLifetime := !end.IsZero() && !end.After(now); !overLifetime {
			if held && !exp.After(now) {
				// An operation is still open: its window runs from now.
				exp = capExpiry(*rt, *sb, now.Add(idleTimeout(*rt)))
			}
			if exp.IsZero() || exp.After(now) {
				if exp.After(sb.ExpiresAt) {
					sb.ExpiresAt = exp // record what activity did
					return nil
				}
				return errNotExpired
			}
		}
		if err := p.Pause(ctx, handleOf(*sb)); err != nil {
			return err
		}
		sb.State = store.SandboxPaused
		sb.PauseReason = store.PauseTimeout
		sb.PausedAt = s.now()
		rt.Status = store.RuntimePaused
		paused = true
		return nil
	})
	switch {
	case errors.Is(err, errNotExpired):
		return false, nil
	case errdefs.IsConflict(err):
		// No longer running, or another action won the race: nothing
		// to expire now.
		return false, nil
	}
	return paused, err
}

// errNotExpired stops a timeout pause whose window was extended.
var errNotExpired = errors.New("sandbox has not expired")
