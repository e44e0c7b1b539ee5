package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"testing"
)

// mapResolver resolves the names it holds and fails every other.
type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

// TestRefusalKinds: every decision that lets nothing through says of which
// kind it is, for code to switch on (the reason is for people), and one
// that went through has none.
func TestRefusalKinds(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close() // nothing listens there now: the upstream refuses
	r := newRig(t, []string{"registry.test:" + closed, "registry.test", "unknown.test", "loop.test", "plain.test"}, []string{"denied.test"}, 443)
	r.mapHost(closed, "registry.test")
	r.proxy.cfg.Resolver = mapResolver{"loop.test": {netip.MustParseAddr("127.0.0.1")}}
	c := r.client(testUser, testPass, nil)
	n := 0
	for _, tc := range []struct {
		url  string
		want Refusal
	}{
		{"http://other.test/", RefusalNotAllowed},
		{"http://denied.test/", RefusalDenied},
		{"http://unknown.test/", RefusalUnresolved},
		{"http://loop.test/", RefusalInternal},
		{"http://registry.test:" + closed + "/", RefusalUpstream},
	} {
		res, err := c.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		n++
		if d := r.last(n); d.Allowed || d.Refusal != tc.want {
			t.Errorf("%s: allowed %v, refusal %q (%s), want %q", tc.url, d.Allowed, d.Refusal, d.Reason, tc.want)
		}
	}
	r.proxy.cfg.Policy = func(context.Context, Identity) (Policy, error) { return Policy{}, errors.New("store down") }
	res, err := c.Get("http://registry.test/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	n++
	if d := r.last(n); res.StatusCode != http.StatusServiceUnavailable || d.Refusal != RefusalUnavailable {
		t.Errorf("policy unreadable: status %d, refusal %q, want 503 and %q", res.StatusCode, d.Refusal, RefusalUnavailable)
	}
}

// TestDenyRules names the deny rules that refuse a host, as written.
func TestDenyRules(t *testing.T) {
	p, err := ParsePolicy([]string{"*"}, []string{"*.anthropic.com", "api.anthropic.com:80", "pypi.org"})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.DenyRules("api.anthropic.com", 443); len(got) != 1 || got[0] != "*.anthropic.com" {
		t.Fatalf("DenyRules(api.anthropic.com, 443) = %q", got)
	}
	if got := p.DenyRules("example.com", 443); len(got) != 0 {
		t.Fatalf("DenyRules(example.com, 443) = %q", got)
	}
}
