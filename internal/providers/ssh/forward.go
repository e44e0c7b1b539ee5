package ssh

import (
	"context"
	"net"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// In container mode the Docker provider does the lifecycle on the
// machine; in bare mode, bare does (bare.go). Egress networks are not
// forwarded: the proxy and its firewall rules are the server's host's,
// which a machine's sandboxes do not share, so this provider is no
// provider.Networker and offers network policy none only (and, in bare
// mode, the machine's own network, open).

// codeBareUnsupported: an operation bare mode does not offer (pause,
// snapshots, images).
const codeBareUnsupported = "ssh_bare_unsupported"

func bareUnsupported(what string) error {
	return errdefs.NotImplemented(codeBareUnsupported, "the ssh provider's bare mode does not %s", what)
}

// Name returns the provider's registry name.
func (p *Provider) Name() string { return p.name }

// Mode is ModeContainer or ModeBare.
func (p *Provider) Mode() string {
	if p.b != nil {
		return ModeBare
	}
	return ModeContainer
}

// Create is the Docker provider's, on the machine (bare: a sandbox
// recorded there); a machine torn down is in use again.
func (p *Provider) Create(ctx context.Context, spec provider.Spec) (provider.Handle, error) {
	p.parked.Store(false)
	if p.b != nil {
		return p.b.Create(ctx, spec)
	}
	return p.d.Create(ctx, spec)
}

// Start is the Docker provider's, on the machine (bare: the agent run
// there).
func (p *Provider) Start(ctx context.Context, h provider.Handle) error {
	if p.b != nil {
		return p.b.Start(ctx, h)
	}
	return p.d.Start(ctx, h)
}

// Pause is the Docker provider's, on the machine; bare mode cannot.
func (p *Provider) Pause(ctx context.Context, h provider.Handle) error {
	if p.b != nil {
		return bareUnsupported("pause sandboxes")
	}
	return p.d.Pause(ctx, h)
}

// Resume is the Docker provider's, on the machine; bare mode cannot.
func (p *Provider) Resume(ctx context.Context, h provider.Handle) error {
	if p.b != nil {
		return bareUnsupported("pause sandboxes")
	}
	return p.d.Resume(ctx, h)
}

// Destroy is the Docker provider's, on the machine (bare: the agent's
// processes killed, its directory removed).
func (p *Provider) Destroy(ctx context.Context, h provider.Handle) error {
	if p.b != nil {
		return p.b.Destroy(ctx, h)
	}
	return p.d.Destroy(ctx, h)
}

// Inspect is the Docker provider's, on the machine (bare: from the
// sandbox's record there).
func (p *Provider) Inspect(ctx context.Context, h provider.Handle) (provider.Status, error) {
	if p.b != nil {
		return p.b.Inspect(ctx, h)
	}
	return p.d.Inspect(ctx, h)
}

// DialAgent dials the agent's socket on the machine through the SSH
// connection and verifies the agent by its key.
func (p *Provider) DialAgent(ctx context.Context, h provider.Handle) (net.Conn, error) {
	if p.b != nil {
		return p.b.DialAgent(ctx, h)
	}
	return p.d.DialAgent(ctx, h)
}

// List is the Docker provider's, on the machine (bare: the records
// there).
func (p *Provider) List(ctx context.Context, instance string) ([]provider.Listed, error) {
	if p.b != nil {
		return p.b.List(ctx, instance)
	}
	return p.d.List(ctx, instance)
}

// RemoveWorkspace is the Docker provider's, on the machine (bare: the
// workspace's directory).
func (p *Provider) RemoveWorkspace(ctx context.Context, name string) error {
	if p.b != nil {
		return p.b.RemoveWorkspace(ctx, name)
	}
	return p.d.RemoveWorkspace(ctx, name)
}

// Snapshot is the Docker provider's, on the machine's engine; bare mode
// has none.
func (p *Provider) Snapshot(ctx context.Context, h provider.Handle, labels map[string]string) (string, error) {
	if p.b != nil {
		return "", bareUnsupported("snapshot sandboxes")
	}
	return p.d.Snapshot(ctx, h, labels)
}

// RemoveSnapshot is the Docker provider's, on the machine's engine.
func (p *Provider) RemoveSnapshot(ctx context.Context, ref string) error {
	if p.b != nil {
		return bareUnsupported("snapshot sandboxes")
	}
	return p.d.RemoveSnapshot(ctx, ref)
}

// IsSnapshot is the Docker provider's (bare mode has none).
func (p *Provider) IsSnapshot(ref string) bool { return p.b == nil && p.d.IsSnapshot(ref) }

// Capacity is the machine's cores and memory, as its engine says (bare:
// as the machine says).
func (p *Provider) Capacity(ctx context.Context) (provider.Resources, error) {
	if p.b != nil {
		return p.b.Capacity(ctx)
	}
	return p.d.Capacity(ctx)
}

// AgentLog is the Docker provider's, on the machine's engine (bare: the
// agent's log file there).
func (p *Provider) AgentLog(ctx context.Context, h provider.Handle, tail int) (string, error) {
	if p.b != nil {
		return p.b.AgentLog(ctx, h, tail)
	}
	return p.d.AgentLog(ctx, h, tail)
}

// ImageLabels is the Docker provider's, on the machine's engine; bare
// mode runs no image.
func (p *Provider) ImageLabels(ctx context.Context, image string) (map[string]string, error) {
	if p.b != nil {
		return nil, bareUnsupported("run images")
	}
	return p.d.ImageLabels(ctx, image)
}

// CheckImage is the Docker provider's, on the machine's engine. Bare mode
// runs every sandbox on the machine's own filesystem: the image names
// nothing there and any well-formed one is accepted.
func (p *Provider) CheckImage(ctx context.Context, image string) error {
	if p.b != nil {
		return nil
	}
	return p.d.CheckImage(ctx, image)
}
