package egress

import "net/netip"

// guard refuses addresses a sandbox must not reach through the proxy
// unless a rule names them: the host's own, loopback, link-local (cloud
// metadata among them), private and other special ranges.
type guard struct {
	host []netip.Prefix
}

var special = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved (benchmarking)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64, which can reach anything"},
}

// refuse says why a must not be reached, or "".
func (g *guard) refuse(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "link-local (cloud metadata lives there)"
	case a.IsPrivate():
		return "private"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast() || a.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, s := range special {
		if s.prefix.Contains(a) {
			return s.why
		}
	}
	for _, p := range g.host {
		if p.Contains(a) {
			return "the host's own"
		}
	}
	return ""
}
