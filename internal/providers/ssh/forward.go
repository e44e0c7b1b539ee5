package ssh

import (
	"context"
	"net"

	"github.com/paddockhq/paddock/internal/provider"
)

// The Docker provider does the lifecycle on the machine. Its egress
// networks are not forwarded: the proxy and its firewall rules are the
// server's host's, which a machine's sandboxes do not share, so this
// provider is no provider.Networker and offers network policy none only.

// Name returns the provider's registry name.
func (p *Provider) Name() string { return p.name }

// Create is the Docker provider's, on the machine; a machine torn down
// is in use again.
func (p *Provider) Create(ctx context.Context, spec provider.Spec) (provider.Handle, error) {
	p.parked.Store(false)
	return p.d.Create(ctx, spec)
}

// Start is the Docker provider's, on the machine.
func (p *Provider) Start(ctx context.Context, h provider.Handle) error { return p.d.Start(ctx, h) }

// Pause is the Docker provider's, on the machine.
func (p *Provider) Pause(ctx context.Context, h provider.Handle) error { return p.d.Pause(ctx, h) }

// Resume is the Docker provider's, on the machine.
func (p *Provider) Resume(ctx context.Context, h provider.Handle) error { return p.d.Resume(ctx, h) }

// Destroy is the Docker provider's, on the machine.
func (p *Provider) Destroy(ctx context.Context, h provider.Handle) error {
	return p.d.Destroy(ctx, h)
}

// Inspect is the Docker provider's, on the machine.
func (p *Provider) Inspect(ctx context.Context, h provider.Handle) (provider.Status, error) {
	return p.d.Inspect(ctx, h)
}

// DialAgent dials the agent's socket on the machine through the SSH
// connection and verifies the agent by its key.
func (p *Provider) DialAgent(ctx context.Context, h provider.Handle) (net.Conn, error) {
	return p.d.DialAgent(ctx, h)
}

// List is the Docker provider's, on the machine.
func (p *Provider) List(ctx context.Context, instance string) ([]provider.Listed, error) {
	return p.d.List(ctx, instance)
}

// RemoveWorkspace is the Docker provider's, on the machine.
func (p *Provider) RemoveWorkspace(ctx context.Context, name string) error {
	return p.d.RemoveWorkspace(ctx, name)
}

// Snapshot is the Docker provider's, on the machine's engine.
func (p *Provider) Snapshot(ctx context.Context, h provider.Handle, labels map[string]string) (string, error) {
	return p.d.Snapshot(ctx, h, labels)
}

// RemoveSnapshot is the Docker provider's, on the machine's engine.
func (p *Provider) RemoveSnapshot(ctx context.Context, ref string) error {
	return p.d.RemoveSnapshot(ctx, ref)
}

// IsSnapshot is the Docker provider's.
func (p *Provider) IsSnapshot(ref string) bool { return p.d.IsSnapshot(ref) }

// Capacity is the machine's cores and memory, as its engine says.
func (p *Provider) Capacity(ctx context.Context) (provider.Resources, error) {
	return p.d.Capacity(ctx)
}

// AgentLog is the Docker provider's, on the machine's engine.
func (p *Provider) AgentLog(ctx context.Context, h provider.Handle, tail int) (string, error) {
	return p.d.AgentLog(ctx, h, tail)
}

// ImageLabels is the Docker provider's, on the machine's engine.
func (p *Provider) ImageLabels(ctx context.Context, image string) (map[string]string, error) {
	return p.d.ImageLabels(ctx, image)
}

// CheckImage is the Docker provider's, on the machine's engine.
func (p *Provider) CheckImage(ctx context.Context, image string) error {
	return p.d.CheckImage(ctx, image)
}
