package ssh

import (
	"context"
	"fmt"
)

// Teardown is what paddock does to a machine an org brought once no
// sandbox has run on it for its idle time, after the runtime service
// archived the sandboxes it had there: it removes the run directory (the
// agent binary and the sockets' directories), runs command over SSH when
// there is one (a rented machine powering itself off: a link that drops
// under it is not an error), and hangs up. The next operation dials again
// and prepares the machine anew. Until then the machine is parked: the
// orphan sweep does not dial it.
func (p *Provider) Teardown(ctx context.Context, command string) error {
	p.parked.Store(true)
	if _, err := p.conn.Run(ctx, nil, "rm", "-rf", "--", p.runDir); err != nil {
		p.parked.Store(false)
		return fmt.Errorf("remove the run directory %s: %w", p.runDir, err)
	}
	if command != "" {
		if out, err := p.conn.Run(ctx, nil, "sh", "-c", command); err != nil {
			p.logger.WarnContext(ctx, "the machine's teardown command failed, or the link dropped under it", "err", err, "output", string(out))
		}
	}
	return p.conn.Hangup()
}

// Parked says whether the machine was torn down and not used since.
func (p *Provider) Parked() bool { return p.parked.Load() }
