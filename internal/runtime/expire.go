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
//
// On a provider that cannot pause, an expired runtime is archived instead
// (see Pause).
func (s *Service) PauseIfExpired(ctx context.Context, runtimeID string, now time.Time) (bool, error) {
	paused := false
	_, err := onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		return s.transitionLocked(ctx, rt, "pause", store.RuntimeRunning, s.expireIfDue(now, &paused))
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

// expireIfDue is the transition that pauses (or, without pausing,
// archives) a sandbox whose window has passed at now.
func (s *Service) expireIfDue(now time.Time, paused *bool) func(ctx context.Context, p provider.Provider, rt *store.Runtime, sb *store.Sandbox) error {
	return func(ctx context.Context, p provider.Provider, rt *store.Runtime, sb *store.Sandbox) error {
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
		if !p.Capabilities().Pause {
			if !canArchive(p, *rt) {
				return errNotExpired // nothing can keep its work: it runs on
			}
			if err := s.archive(ctx, p, *rt, *sb); err != nil {
				return err
			}
			*paused = true
			return errArchived
		}
		if err := p.Pause(ctx, handleOf(*sb)); err != nil {
			return err
		}
		sb.State = store.SandboxPaused
		sb.PauseReason = store.PauseTimeout
		sb.PausedAt = s.now()
		rt.Status = store.RuntimePaused
		*paused = true
		return nil
	}
}

// errArchived ends a transition whose apply archived the runtime itself,
// rows included: there is nothing left for the transition to write.
var errArchived = errors.New("runtime archived")

// errNotExpired stops a timeout pause whose window was extended.
var errNotExpired = errors.New("sandbox has not expired")
