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

// ParseTrusted reads a list of trusted proxies: CIDRs ("10.0.0.0/8") or
// single addresses ("192.0.2.7").
func ParseTrusted(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
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

// Resolver finds the client address of HTTP requests. Forwarded headers
// are believed only from a trusted proxy: with none trusted (the
// default), the peer is the client.
type Resolver struct {
	trusted []netip.Prefix
}

// New returns a Resolver that believes the proxies in trusted.
func New(trusted []netip.Prefix) Resolver {
	return Resolver{trusted: trusted}
}

// Of is the address r came from. When the peer is a trusted proxy, the
// forwarded chain (X-Forwarded-For, else Forwarded, else X-Real-IP) is
// read from the right, past every trusted proxy, to the first address
// that is not one: the proxies each append the address they saw, and
// whatever lies further left the client could have written. An entry
// that is not an address stops the walk at the last trusted hop.
func (rs Resolver) Of(r *http.Request) string {
	peer := Peer(r.RemoteAddr)
	addr, err := netip.ParseAddr(peer)
	if err != nil || !rs.trusts(addr) {
		return peer
	}
	hops := forwarded(r.Header)
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

// forwarded is the chain of addresses a proxy forwarded, leftmost (the
// claimed client) first, from the first of the headers present.
func forwarded(h http.Header) []string {
	if vs := h.Values("X-Forwarded-For"); len(vs) > 0 {
		return splitList(vs)
	}
	if vs := h.Values("Forwarded"); len(vs) > 0 {
		var hops []string
		for _, elem := range splitList(vs) {
			// for=…;proto=…;by=… (RFC 7239); an element without for=
			// is a hop that cannot be read.
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
	if v := h.Get("X-Real-IP"); v != "" {
		return []string{v}
	}
	return nil
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
