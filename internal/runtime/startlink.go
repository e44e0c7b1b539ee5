package runtime

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// linkWait bounds how long a start waits, once its own work is done, for
// the link it opened beside it; past it the start goes on and the first
// call dials again.
const linkWait = 2 * time.Second

// linkWhile runs fn (the start's last step on the compute: a claimed warm
// sandbox's unpause, a fresh sandbox's record of running) while it opens
// the link to sb's agent for runtimeID beside it: the dial, the agent's
// identity handshake and the runtime's environment overlap fn instead of
// following it in the first command. A link that cannot be opened is no
// failure of the start: the first call dials as it would have. fn's error
// is returned; the link is joined before linkWhile returns.
func (s *Service) linkWhile(ctx context.Context, p provider.Provider, runtimeID string, sb store.Sandbox, fn func() error) error {
	if !p.Capabilities().Agent {
		return fn()
	}
	c, err := s.agents.get(runtimeID, sb, p)
	if err != nil {
		return fn() // shutting down: the first call will say so
	}
	lctx, cancel := context.WithTimeout(ctx, s.defaults.ProvisionTimeout)
	defer cancel()
	linked := make(chan error, 1)
	go func() { linked <- c.Health(lctx) }()
	err = fn()
	if err != nil {
		cancel()
	}
	select {
	case lerr := <-linked:
		if lerr != nil && err == nil {
			s.logger.DebugContext(ctx, "opening the agent link at start failed; the first call dials again", "runtime", runtimeID, "sandbox", sb.ID, "err", lerr)
		}
		return err
	case <-time.After(linkWait):
	}
	cancel()
	<-linked
	return err
}
