package runtime

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// SetTimeout sets a running runtime's expiry window to now+d exactly,
// shortening it as well as extending it (Keepalive only extends), capped
// by the installation's maximum keepalive and the runtime's lifetime. It
// is what the E2B-compatible surface's timeouts are: the sandbox expires
// (pauses) d from now unless activity within its idle timeout extends it.
func (s *Service) SetTimeout(ctx context.Context, runtimeID string, d time.Duration) (store.Runtime, error) {
	if d <= 0 {
		return store.Runtime{}, errdefs.InvalidArgument("invalid_timeout", "a timeout must be positive")
	}
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		if rt.Status != store.RuntimeRunning || rt.CurrentSandboxID == "" {
			return rt, statusConflict("timeout", s.name(ctx, rt), rt)
		}
		sb, err := s.store.GetSandbox(ctx, rt.CurrentSandboxID)
		if err != nil {
			return rt, err
		}
		now := s.now()
		sb.ExpiresAt = capExpiry(rt, sb, now.Add(min(d, s.defaults.MaxKeepalive)))
		if _, err := s.store.SetSandboxExpiry(ctx, sb.ID, sb.ExpiresAt); err != nil {
			return rt, err
		}
		s.publish(Event{Kind: EventUpdated, Runtime: rt, Sandbox: sb, At: now})
		return rt, nil
	})
}
