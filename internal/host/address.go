package host

import (
	"context"
	"net"
	"net/netip"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// pinAddress resolves addr (host:port) and answers the address paddock
// will dial from now on: its first IP with the port, so what was checked
// is what is dialed (a name that later resolves elsewhere changes
// nothing). A machine an org brings may be on a private network (a LAN,
// a VPN), so private addresses are allowed; what is refused, 422
// host_address_refused, is an address that is paddock's own or no
// machine's: loopback, link-local (the cloud metadata service among
// them), unspecified, multicast, and the addresses of this host's
// interfaces. Otherwise a member could make the server dial its own
// services and learn from the answer which listen.
func (s *Service) pinAddress(ctx context.Context, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", errdefs.InvalidArgument(CodeInvalid, "the address %q is a host or host:port", addr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = s.resolve(ctx, host); err != nil || len(ips) == 0 {
		return "", errdefs.FailedPrecondition(CodeUnreachable, "the machine's name %q does not resolve", host)
	}
	own := ownAddrs()
	for _, ip := range ips {
		if why := refusedAddr(ip.Unmap(), own); why != "" {
			return "", errdefs.FailedPrecondition(CodeAddressRefused, "%q resolves to %s, %s: a machine an org brings is reached at an address of its own", host, ip, why)
		}
	}
	return net.JoinHostPort(ips[0].Unmap().String(), port), nil
}

// resolve looks host up (Config.Resolve in tests).
func (s *Service) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if s.cfg.Resolve != nil {
		return s.cfg.Resolve(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// refusedAddr says why ip is no machine's address, or "".
func refusedAddr(ip netip.Addr, own map[netip.Addr]bool) string {
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "a link-local address"
	case ip.IsUnspecified():
		return "the unspecified address"
	case ip.IsMulticast():
		return "a multicast address"
	case own[ip]:
		return "an address of this server's own host"
	}
	return ""
}

// ownAddrs are the addresses of this host's interfaces.
func ownAddrs() map[netip.Addr]bool {
	own := map[netip.Addr]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return own
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			own[p.Addr().Unmap()] = true
		}
	}
	return own
}
