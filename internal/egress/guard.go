package egress

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// CodeInternalAddress is the public code of an allow rule that names an
// internal address: only the installation may open one.
const CodeInternalAddress = "internal_address_not_allowed"

// Guard keeps sandboxes away from internal addresses: the host's own,
// loopback, link-local (cloud metadata among them), private and other
// special ranges, and the installation's Docker networks. It is not a
// rule: the proxy applies it after the rules, to the address it dials,
// whatever the rules allow. Only the installation's configuration opens an
// internal address (egress.allow_internal, and the names of egress.hosts);
// a tenant's allow rule that names one is refused (CheckPolicy). Loopback,
// the host's own addresses, its bridges' networks and the installation's
// networks stay closed whatever egress.allow_internal says: only an
// egress.hosts entry opens one of them, for its name and its ports.
type Guard struct {
	open      []netip.Prefix
	networks  atomic.Pointer[[]netip.Prefix]
	hostAddrs func(fresh bool) []netip.Prefix
}

// GuardConfig configures a Guard.
type GuardConfig struct {
	// AllowInternal are the internal addresses and ranges the
	// installation opens to every sandbox (egress.allow_internal).
	AllowInternal []netip.Prefix
	// HostAddrs returns the host's own addresses and the networks of its
	// bridges (Docker's among them); fresh asks for them as they are now
	// rather than as last read. nil reads the host's interfaces, again
	// every few seconds and whenever an address is about to be opened.
	HostAddrs func(fresh bool) []netip.Prefix
}

// NewGuard returns a Guard.
func NewGuard(cfg GuardConfig) *Guard {
	g := &Guard{hostAddrs: cfg.HostAddrs}
	for _, p := range cfg.AllowInternal {
		g.open = append(g.open, unmapPrefix(p.Masked()))
	}
	if g.hostAddrs == nil {
		g.hostAddrs = (&interfaceAddrs{ttl: 5 * time.Second}).get
	}
	return g
}

// AddNetworks closes the subnets of the installation's networks (the proxy
// and open networks), known once they are set up.
func (g *Guard) AddNetworks(subnets ...netip.Prefix) {
	for {
		old := g.networks.Load()
		var next []netip.Prefix
		if old != nil {
			next = append(next, *old...)
		}
		for _, p := range subnets {
			next = append(next, unmapPrefix(p.Masked()))
		}
		if g.networks.CompareAndSwap(old, &next) {
			return
		}
	}
}

type closedRange struct {
	prefix netip.Prefix
	why    string
}

// hostRanges reach the host itself: egress.allow_internal never opens
// them (0.0.0.0 and :: dial the host's loopback).
var hostRanges = []closedRange{
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
}

// internalRanges are closed to sandboxes unless the installation opens
// them. The first that contains an address names why.
var internalRanges = []closedRange{
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata lives there)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local (cloud metadata lives there)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("fc00::/7"), "private (unique local)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved (benchmarking)"},
	{netip.MustParsePrefix("::/96"), "reserved (IPv4-compatible)"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64, which can reach anything"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64, which can reach anything"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "IPv4-translated, which can reach anything"},
	{netip.MustParsePrefix("2002::/16"), "6to4, which embeds an IPv4 address"},
	{netip.MustParsePrefix("2001::/32"), "Teredo, which embeds an IPv4 address"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("100::/64"), "reserved (discard)"},
}

// Closed says why a sandbox must not reach a, or "" when it may: a is
// internal and the installation did not open it.
func (g *Guard) Closed(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	return g.closed(netip.PrefixFrom(a, a.BitLen()))
}

// closed says why p (an address or a range) holds addresses a sandbox
// must not reach, or "". The host's own come first: egress.allow_internal
// never opens them. An address about to be opened and not among the host's
// interfaces as last read is checked against them as they are now, so a
// bridge made a moment ago is closed already.
func (g *Guard) closed(p netip.Prefix) string {
	opened := false
	for _, o := range g.open {
		if o.Bits() <= p.Bits() && o.Contains(p.Addr()) {
			opened = true
			break
		}
	}
	if why := g.hosts(p, opened); why != "" {
		return why
	}
	if opened {
		return ""
	}
	for _, r := range internalRanges {
		if r.prefix.Overlaps(p) {
			return r.why
		}
	}
	return ""
}

// hosts says why p overlaps the host itself (loopback, its addresses, its
// bridges' networks) or the installation's networks, or "". With fresh, a
// miss in the interfaces as last read reads them again.
func (g *Guard) hosts(p netip.Prefix, fresh bool) string {
	for _, r := range hostRanges {
		if r.prefix.Overlaps(p) {
			return r.why
		}
	}
	overlaps := func(addrs []netip.Prefix) bool {
		return slices.ContainsFunc(addrs, func(h netip.Prefix) bool { return h.Overlaps(p) })
	}
	if overlaps(g.hostAddrs(false)) || fresh && overlaps(g.hostAddrs(true)) {
		return "the host's own (an address or a bridge's network)"
	}
	if nets := g.networks.Load(); nets != nil {
		for _, n := range *nets {
			if n.Overlaps(p) {
				return "one of the installation's networks"
			}
		}
	}
	return ""
}

// CheckPolicy refuses allow rules that name internal addresses: a tenant
// cannot open what the guard closes. An address or CIDR rule is refused
// when it overlaps an internal range the installation did not open (but
// 0.0.0.0/0 and ::/0, which name every address, are kept: the guard still
// closes the internal ones); a domain rule when it names localhost. Deny
// rules may name anything.
func (g *Guard) CheckPolicy(p Policy) error {
	for _, r := range p.Allow {
		if why := g.closedRule(r); why != "" {
			return errdefs.InvalidArgument(CodeInternalAddress,
				"allow rule %q names an internal address (%s); only the installation's egress.allow_internal or egress.hosts can open one", r.raw, why)
		}
	}
	return nil
}

// closedRule says why allow rule r would open an internal address, or "".
func (g *Guard) closedRule(r Rule) string {
	if r.domain != "" {
		if isLocalhost(strings.TrimPrefix(r.domain, "*.")) {
			return "localhost"
		}
		return ""
	}
	if r.prefix.Bits() == 0 {
		return ""
	}
	return g.closed(r.prefix)
}

// isLocalhost reports whether a domain (lower case) names the local host.
func isLocalhost(d string) bool {
	switch d {
	case "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback":
		return true
	}
	return strings.HasSuffix(d, ".localhost")
}

// unmapPrefix turns an IPv4-mapped IPv6 range into its IPv4 range.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p
}

// ParseIPv4 reads an IPv4 address in any of the forms inet_aton(3) and
// URL parsers accept: dotted decimal, and each part in decimal, hex (0x7f)
// or octal (0177), with one to four parts, the last filling the rest
// (127.1, 2130706433).
func ParseIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 || s == "" {
		return netip.Addr{}, false
	}
	var v uint64
	for i, part := range parts {
		n, ok := parseIPv4Part(part)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Part reads one part: decimal, 0x hex or 0 octal.
func parseIPv4Part(s string) (uint64, bool) {
	base := uint64(10)
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	if s == "" || len(s) > 32 {
		return 0, false
	}
	var n uint64
	for _, c := range strings.ToLower(s) {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
		if n > 1<<32 {
			return 0, false
		}
	}
	return n, true
}

// parseAddr reads an address literal in any encoding: IPv6 (mapped IPv4
// included) and every IPv4 form ParseIPv4 reads.
func parseAddr(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return a, true
	}
	return ParseIPv4(s)
}

// interfaceAddrs reads the host's addresses, and the on-link networks of
// its bridges (Docker makes one per network, and its containers' addresses
// are in it), again once they are older than ttl or when asked for fresh
// ones: interfaces come and go.
type interfaceAddrs struct {
	ttl time.Duration

	mu   sync.Mutex
	at   time.Time
	last []netip.Prefix
}

func (c *interfaceAddrs) get(fresh bool) []netip.Prefix {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != nil && !fresh && time.Since(c.at) < c.ttl {
		return c.last
	}
	out, err := readInterfaces()
	if err != nil && c.last != nil {
		return c.last // keep what was read
	}
	c.last, c.at = out, time.Now()
	return out
}

// readInterfaces lists every address of the host's interfaces, and the
// whole network of each address on a bridge.
func readInterfaces() ([]netip.Prefix, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := []netip.Prefix{}
	for _, ifc := range ifaces {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		bridge := isBridge(ifc.Name)
		for _, a := range addrs {
			p, err := netip.ParsePrefix(a.String())
			if err != nil {
				continue
			}
			addr := p.Addr().Unmap().WithZone("")
			out = append(out, netip.PrefixFrom(addr, addr.BitLen()))
			if bridge && !addr.IsLinkLocalUnicast() {
				out = append(out, unmapPrefix(p.Masked()))
			}
		}
	}
	return out, nil
}

// isBridge reports whether the named interface is a bridge (Linux shows
// /sys/class/net/NAME/bridge for those).
func isBridge(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name, "bridge"))
	return err == nil
}
