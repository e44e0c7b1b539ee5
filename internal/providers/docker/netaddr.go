package docker

import (
	"context"
	"net/netip"

	"github.com/docker/docker/api/types/network"

	"github.com/paddockhq/paddock/internal/provider"
)

var _ provider.NetworkAddresser = (*Provider)(nil)

// NetworkSubnets returns the subnets of the proxy and open networks: the
// egress guard closes them, so that the proxy never dials a sandbox.
func (p *Provider) NetworkSubnets(ctx context.Context) ([]netip.Prefix, error) {
	n := p.cfg.Networks
	if n == nil {
		return nil, nil
	}
	var out []netip.Prefix
	for _, name := range []string{n.Proxy, n.Open} {
		insp, err := p.cli.NetworkInspect(ctx, name, network.InspectOptions{})
		if err != nil {
			return nil, engineErr("inspect network "+name+" for", err)
		}
		for _, c := range insp.IPAM.Config {
			if s, err := netip.ParsePrefix(c.Subnet); err == nil {
				out = append(out, s.Masked())
			}
		}
	}
	return out, nil
}

// SandboxAddrs returns the addresses sandbox h has on the proxy and open
// networks: those it sends from.
func (p *Provider) SandboxAddrs(ctx context.Context, h provider.Handle) ([]netip.Addr, error) {
	c, err := p.lookup(ctx, h.ID)
	if err != nil {
		return nil, err
	}
	n := p.cfg.Networks
	if n == nil || c.NetworkSettings == nil {
		return nil, nil
	}
	var out []netip.Addr
	for name, ep := range c.NetworkSettings.Networks {
		if ep == nil || name != n.Proxy && name != n.Open {
			continue
		}
		for _, s := range []string{ep.IPAddress, ep.GlobalIPv6Address} {
			if a, err := netip.ParseAddr(s); err == nil {
				out = append(out, a.Unmap())
			}
		}
	}
	return out, nil
}
