package egress

import (
	"net/netip"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
)

func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"pypi.org", true},
		{"*.pypi.org", true},
		{"*", true},
		{"PyPI.org.", true},
		{"registry.test:5000", true},
		{"10.0.0.0/8", true},
		{"192.0.2.7", true},
		{"192.0.2.7:22", true},
		{"[2001:db8::1]:22", true},
		{"::1/128", true},
		{"", false},
		{"pypi.org:0", false},
		{"pypi.org:70000", false},
		{"pypi.org:http", false},
		{"a..b", false},
		{"-a.com", false},
		{"a b.com", false},
		{"*.*.com", false},
		{"10.0.0.0/33", false},
		{"http://pypi.org", false},
		{"2001:db8::1:22:x", false},
	} {
		_, err := ParseRule(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseRule(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
		if pub, ok := errdefs.Public(err); err != nil && (!ok || pub.Code != CodeInvalidRule) {
			t.Errorf("ParseRule(%q): %v, want code %q", tc.in, err, CodeInvalidRule)
		}
	}
}

func TestDecide(t *testing.T) {
	pol, err := ParsePolicy(
		[]string{"pypi.org", "*.pythonhosted.org", "git.test:2222", "203.0.113.0/24", "10.1.2.3/32", "10.0.0.0/8", "127.0.0.0/8"},
		[]string{"evil.pythonhosted.org", "203.0.113.66"},
	)
	if err != nil {
		t.Fatal(err)
	}
	public := netip.MustParseAddr("198.51.100.10")
	g := NewGuard(GuardConfig{
		AllowInternal: []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24")},
		HostAddrs:     func(bool) []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix("198.51.100.200/32")} },
	})
	for _, tc := range []struct {
		name string
		host string
		port int
		addr string
		want bool
	}{
		{"allowed domain on 443", "pypi.org", 443, public.String(), true},
		{"allowed domain on 80", "pypi.org", 80, public.String(), true},
		{"allowed domain, other port", "pypi.org", 22, public.String(), false},
		{"subdomain wildcard", "files.pythonhosted.org", 443, public.String(), true},
		{"wildcard excludes the apex", "pythonhosted.org", 443, public.String(), false},
		{"deny wins", "evil.pythonhosted.org", 443, public.String(), false},
		{"host:port rule", "git.test", 2222, public.String(), true},
		{"host:port rule, other port", "git.test", 443, public.String(), false},
		{"unlisted domain", "example.com", 443, public.String(), false},
		{"CIDR on any port", "203.0.113.5", 5432, "203.0.113.5", true},
		{"denied address in an allowed CIDR", "203.0.113.66", 443, "203.0.113.66", false},
		{"allowed name resolving to loopback", "pypi.org", 443, "127.0.0.1", false},
		{"allowed name resolving to metadata", "pypi.org", 80, "169.254.169.254", false},
		{"allowed name resolving to private", "pypi.org", 443, "10.0.0.8", false},
		{"allowed name resolving to the host", "pypi.org", 443, "198.51.100.200", false},
		{"private address the installation opened", "10.1.2.3", 8080, "10.1.2.3", true},
		{"allowed name resolving to an opened private address", "pypi.org", 443, "10.1.2.3", true},
		{"private address a stored rule names, not opened", "10.9.9.9", 8080, "10.9.9.9", false},
		{"loopback a stored rule names", "127.0.0.1", 8080, "127.0.0.1", false},
		{"mapped loopback a stored rule names", "::ffff:127.0.0.1", 8080, "::ffff:127.0.0.1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := netip.MustParseAddr(tc.addr)
			var byName *Verdict
			if _, err := netip.ParseAddr(tc.host); err != nil {
				allowed, v, done := pol.decideName(tc.host, tc.port)
				if done {
					if tc.want {
						t.Fatalf("refused by name: %s", v.Reason)
					}
					return
				}
				if allowed {
					byName = &v
				}
			}
			v := pol.decide(a, tc.port, byName, false, g)
			if v.Allowed != tc.want {
				t.Fatalf("%s:%d at %s: allowed=%v (%s), want %v", tc.host, tc.port, a, v.Allowed, v.Reason, tc.want)
			}
			if v.Reason == "" {
				t.Fatal("a verdict without a reason")
			}
		})
	}
}
