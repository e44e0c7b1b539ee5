// Package clientaddr says which address a caller came from, for the rate
// limits and logs of every door (the API, previews, the SSH gateway): the
// connection's peer, or, for HTTP through a proxy the installation trusts,
// the client that proxy forwarded.
package clientaddr

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Peer is the address of a connection's peer, given as "host:port": its
// host, an IPv4 address mapped into IPv6 written as IPv4, so that one
// client is one key however it connected. It is the client address of a
// connection without forwarded headers (the SSH gateway's), and of a
// request from a proxy that is not trusted.
func Peer(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().WithZone("").String()
	}
	return host
}

// Key is the rate-limit key of a client address (as Peer and Of give
// it): an IPv4 address itself, an IPv6 address its /64, the least a
// network hands one subscriber, so that a client cannot mint fresh keys
// from the addresses of its own subnet. Anything else is its own key.
func Key(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is6() || a.Is4In6() {
		return addr
	}
	return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
}

// ParseTrusted reads a list of trusted proxies: CIDRs ("10.0.0.0/8") or
// single addresses ("192.0.2.7"). A CIDR written IPv4-mapped
// ("::ffff:10.0.0.0/104") is the IPv4 CIDR it maps (client addresses are
// compared unmapped); one that reaches past the mapped range is refused.
func ParseTrusted(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			if p.Addr().Is4In6() {
				if p.Bits() < 96 {
					return nil, fmt.Errorf("trusted proxy %q: an IPv4-mapped CIDR needs at least 96 bits; write the IPv4 CIDR", s)
				}
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither a CIDR nor an IP address", s)
		}
		a = a.Unmap().WithZone("")
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// The headers a trusted proxy may name the client in.
const (
	XForwardedFor = "X-Forwarded-For"
	Forwarded     = "Forwarded"
	XRealIP       = "X-Real-IP"
)

// ParseHeader reads the name of the header the trusted proxies write,
// in any case: X-Forwarded-For (also for ""), Forwarded or X-Real-IP.
func ParseHeader(s string) (string, error) {
	if s == "" {
		return XForwardedFor, nil
	}
	for _, h := range []string{XForwardedFor, Forwarded, XRealIP} {
		if strings.EqualFold(s, h) {
			return h, nil
		}
	}
	return "", fmt.Errorf("trusted proxy header %q is not one of %s, %s, %s", s, XForwardedFor, Forwarded, XRealIP)
}

// Resolver finds the client address of HTTP requests. Forwarded headers
// are believed only from a trusted proxy: with none trusted (the
// default), the peer is the client.
type Resolver struct {
	trusted []netip.Prefix
	header  string
}

// New returns a Resolver that believes the proxies in trusted, in the
// one header they write (ParseHeader; "" is X-Forwarded-For).
func New(trusted []netip.Prefix, header string) (Resolver, error) {
	h, err := ParseHeader(header)
	if err != nil {
		return Resolver{}, err
	}
	return Resolver{trusted: trusted, header: h}, nil
}

// Of is the address r came from. When the peer is a trusted proxy, the
// forwarded chain in the Resolver's header, and in no other, is read
// from the right, past every trusted proxy, to the first address that
// is not one: the proxies each append the address they saw, and
// whatever lies further left the client could have written. Another
// header is the client's own, whatever it says: a proxy that writes
// X-Real-IP passes on an X-Forwarded-For it did not write. An entry
// that is not an address stops the walk at the last trusted hop.
func (rs Resolver) Of(r *http.Request) string {
	peer := Peer(r.RemoteAddr)
	addr, err := netip.ParseAddr(peer)
	if err != nil || !rs.trusts(addr) {
		return peer
	}
	hops := forwarded(r.Header, rs.header)
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parseHop(hops[i])
		if !ok {
			break
		}
		addr = hop
		if !rs.trusts(hop) {
			break
		}
	}
	return addr.String()
}

func (rs Resolver) trusts(a netip.Addr) bool {
	for _, p := range rs.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwarded is the chain of addresses a proxy forwarded in header,
// leftmost (the claimed client) first.
func forwarded(h http.Header, header string) []string {
	vs := h.Values(header)
	if header != Forwarded {
		return splitList(vs)
	}
	var hops []string
	for _, elem := range splitList(vs) {
		// for=…;proto=…;by=… (RFC 7239); an element without for= is a
		// hop that cannot be read.
		hop := ""
		for _, pair := range strings.Split(elem, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(pair), "=")
			if strings.EqualFold(k, "for") {
				hop = strings.Trim(v, `"`)
			}
		}
		hops = append(hops, hop)
	}
	return hops
}

func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, f := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(f))
		}
	}
	return out
}

// parseHop reads one forwarded address: bare, with a port, or IPv6 in
// brackets with or without a port.
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.Unmap().WithZone(""), true
		}
	}
	return netip.Addr{}, false
}
