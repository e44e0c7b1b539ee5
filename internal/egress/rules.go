package egress

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Modes of a runtime's egress policy.
const (
	ModeNone  = "none"  // loopback only
	ModeProxy = "proxy" // only the egress proxy, which applies the rules
	ModeOpen  = "open"  // full outbound access, but not the host itself
)

// MaxRules bounds each of a policy's lists.
const MaxRules = 256

// CodeInvalidRule is the public code of a malformed rule.
const CodeInvalidRule = "invalid_network_rule"

// Policy is what the proxy applies to one runtime's traffic.
type Policy struct {
	Allow []Rule
	Deny  []Rule
}

// Rule is one allow or deny rule: a domain pattern, a host (domain
// pattern or address) with a port, or a CIDR.
type Rule struct {
	raw    string
	domain string       // "example.com", "*.example.com", "*"; "" for an address rule
	prefix netip.Prefix // valid for a CIDR or address rule
	port   int          // 0: the web ports (domain) or any port (CIDR)
}

func (r Rule) String() string { return r.raw }

// ParseRule reads one rule:
//
//	example.com        the domain, on ports 80 and 443
//	*.example.com      any subdomain of it (not example.com itself)
//	*                  any domain, on ports 80 and 443
//	example.com:5432   the domain on that port only (plain TCP through CONNECT)
//	10.0.0.0/8         those addresses on any port
//	192.0.2.7          one address (a /32 or /128) on any port
//	192.0.2.7:22       one address on one port
//	[2001:db8::1]:22   the same in IPv6
//
// An address may be written in any encoding (2130706433, 0x7f.1, 127.1,
// ::ffff:127.0.0.1): it is read as the address it names. Whether a rule
// may name an address is the Guard's to say (CheckPolicy).
func ParseRule(s string) (Rule, error) {
	bad := func(why string) (Rule, error) {
		return Rule{}, errdefs.InvalidArgument(CodeInvalidRule,
			"network rule %q is not valid (%s); a rule is a domain (example.com, *.example.com), host:port, or a CIDR (10.0.0.0/8)", s, why)
	}
	raw := strings.TrimSpace(s)
	if raw == "" || len(raw) > 300 {
		return bad("empty or too long")
	}
	if p, err := netip.ParsePrefix(raw); err == nil {
		return Rule{raw: raw, prefix: unmapPrefix(p.Masked())}, nil
	}
	// A trailing dot ends a fully qualified name, and an address read
	// through a resolver (127.0.0.1., 2130706433.) is that address.
	if a, ok := parseAddr(strings.TrimSuffix(raw, ".")); ok {
		return Rule{raw: raw, prefix: addrPrefix(a)}, nil
	}
	host, port := raw, 0
	if h, p, err := net.SplitHostPort(raw); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return bad("the port must be between 1 and 65535")
		}
		host, port = h, n
	} else if strings.Count(raw, ":") > 0 {
		return bad("malformed host:port")
	}
	if a, ok := parseAddr(strings.TrimSuffix(host, ".")); ok {
		return Rule{raw: raw, prefix: addrPrefix(a), port: port}, nil
	}
	d := strings.TrimSuffix(strings.ToLower(host), ".")
	if d != "*" && !validPattern(d) {
		return bad("not a domain name")
	}
	return Rule{raw: raw, domain: d, port: port}, nil
}

// addrPrefix is the one-address range of a (IPv4 for a mapped address).
func addrPrefix(a netip.Addr) netip.Prefix {
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen())
}

// validPattern reports whether d is a domain name, or "*." and one.
func validPattern(d string) bool {
	d = strings.TrimPrefix(d, "*.")
	if d == "" || len(d) > 253 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// ParsePolicy reads allow and deny lists.
func ParsePolicy(allow, deny []string) (Policy, error) {
	var p Policy
	for _, l := range []struct {
		name string
		in   []string
		out  *[]Rule
	}{{"allow", allow, &p.Allow}, {"deny", deny, &p.Deny}} {
		if len(l.in) > MaxRules {
			return Policy{}, errdefs.InvalidArgument(CodeInvalidRule, "at most %d %s rules", MaxRules, l.name)
		}
		for _, s := range l.in {
			r, err := ParseRule(s)
			if err != nil {
				return Policy{}, err
			}
			*l.out = append(*l.out, r)
		}
	}
	return p, nil
}

// webPorts are the ports a domain rule without a port covers.
func webPort(port int) bool { return port == 80 || port == 443 }

// matchesName reports whether r names host on port.
func (r Rule) matchesName(host string, port int) bool {
	if r.domain == "" {
		return false
	}
	if r.port != 0 && r.port != port || r.port == 0 && !webPort(port) {
		return false
	}
	return MatchDomain(r.domain, host)
}

// MatchDomain reports whether a domain pattern (lower case: example.com,
// *.example.com, which does not match example.com itself, or *) names
// host (lower case).
func MatchDomain(pattern, host string) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasPrefix(pattern, "*."):
		return strings.HasSuffix(host, pattern[1:])
	}
	return host == pattern
}

// matchesAddr reports whether r covers address a on port.
func (r Rule) matchesAddr(a netip.Addr, port int) bool {
	if !r.prefix.IsValid() {
		return false
	}
	return (r.port == 0 || r.port == port) && r.prefix.Contains(a.Unmap())
}

// Verdict is the proxy's answer to one destination.
type Verdict struct {
	Allowed bool
	Reason  string
	Refusal Refusal // RefusalNone when allowed
}

// decideName applies the rules to a destination by name, before it is
// resolved: a deny by name refuses at once; an allow by name lets the
// addresses be checked next.
func (p Policy) decideName(host string, port int) (allowedByName bool, v Verdict, done bool) {
	for _, r := range p.Deny {
		if r.matchesName(host, port) {
			return false, Verdict{Reason: "denied by rule " + r.raw, Refusal: RefusalDenied}, true
		}
	}
	for _, r := range p.Allow {
		if r.matchesName(host, port) {
			return true, Verdict{Allowed: true, Reason: "allowed by rule " + r.raw}, false
		}
	}
	return false, Verdict{}, false
}

// decideAddr applies the rules to one resolved address. byName is the
// verdict of a name rule that allowed the host. The guard applies after
// it, whatever it says (see Proxy.check).
func (p Policy) decideAddr(a netip.Addr, port int, byName *Verdict) Verdict {
	for _, r := range p.Deny {
		if r.matchesAddr(a, port) {
			return Verdict{Reason: "denied by rule " + r.raw, Refusal: RefusalDenied}
		}
	}
	for _, r := range p.Allow {
		if r.matchesAddr(a, port) {
			return Verdict{Allowed: true, Reason: "allowed by rule " + r.raw}
		}
	}
	if byName != nil {
		return *byName
	}
	return Verdict{Reason: "no allow rule matches", Refusal: RefusalNotAllowed}
}

// decide applies the rules, then the guard, to one resolved address: the
// guard is not a rule, and closes internal addresses whatever the rules
// allowed, unless the installation's host map named the address (opened).
func (p Policy) decide(a netip.Addr, port int, byName *Verdict, opened bool, g *Guard) Verdict {
	v := p.decideAddr(a, port, byName)
	if v.Allowed && !opened {
		if why := g.Closed(a); why != "" {
			return Verdict{Reason: fmt.Sprintf("address %s is %s", a, why), Refusal: RefusalInternal}
		}
	}
	return v
}

// DomainPattern checks a domain or wildcard domain (api.example.com,
// *.example.com), as a brokered secret's hosts are written, and returns it
// in lower case.
func DomainPattern(s string) (string, bool) {
	d := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
	if _, ok := parseAddr(d); ok {
		return "", false
	}
	return d, validPattern(d)
}
