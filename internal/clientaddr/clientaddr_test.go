package clientaddr

import (
	"net/http"
	"net/netip"
	"slices"
	"testing"
)

func TestResolver(t *testing.T) {
	trusted, err := ParseTrusted([]string{"10.0.0.0/8", "192.0.2.7", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		peer    string
		header  http.Header
		trusted bool
		from    string // the header the proxies write; "" is X-Forwarded-For
		want    string
	}{
		"no proxy trusted":         {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"203.0.113.1"}}, want: "10.1.2.3"},
		"untrusted peer":           {peer: "198.51.100.1:5000", header: http.Header{"X-Forwarded-For": {"203.0.113.1"}}, trusted: true, want: "198.51.100.1"},
		"mapped peer":              {peer: "[::ffff:198.51.100.1]:5000", trusted: true, want: "198.51.100.1"},
		"trusted, no header":       {peer: "10.1.2.3:5000", trusted: true, want: "10.1.2.3"},
		"one hop":                  {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"203.0.113.1"}}, trusted: true, want: "203.0.113.1"},
		"client-written left part": {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"1.1.1.1, 203.0.113.1"}}, trusted: true, want: "203.0.113.1"},
		"two trusted hops":         {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"203.0.113.1, 192.0.2.7", "10.9.9.9"}}, trusted: true, want: "203.0.113.1"},
		"all trusted":              {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"10.5.5.5"}}, trusted: true, want: "10.5.5.5"},
		"hop with a port":          {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"203.0.113.1:4444"}}, trusted: true, want: "203.0.113.1"},
		"bad hop stops":            {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"203.0.113.1, nonsense, 10.4.4.4"}}, trusted: true, want: "10.4.4.4"},
		"forwarded":                {peer: "[fd00::1]:5000", header: http.Header{"Forwarded": {`for=203.0.113.9;proto=https, for="[2001:db8::5]:80"`}}, trusted: true, from: "forwarded", want: "2001:db8::5"},
		"forwarded obfuscated":     {peer: "10.1.2.3:5000", header: http.Header{"Forwarded": {"for=_hidden"}}, trusted: true, from: "Forwarded", want: "10.1.2.3"},
		"forwarded without for":    {peer: "10.1.2.3:5000", header: http.Header{"Forwarded": {"proto=https"}}, trusted: true, from: "Forwarded", want: "10.1.2.3"},
		"x-real-ip":                {peer: "10.1.2.3:5000", header: http.Header{"X-Real-Ip": {"203.0.113.3"}}, trusted: true, from: "X-Real-IP", want: "203.0.113.3"},
		"x-real-ip written twice":  {peer: "10.1.2.3:5000", header: http.Header{"X-Real-Ip": {"198.51.100.9", "203.0.113.3"}}, trusted: true, from: "X-Real-IP", want: "203.0.113.3"},
		// Only the configured header is read: the others are the
		// client's own, however they are spelled.
		"x-forwarded-for only":                {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"203.0.113.1"}, "Forwarded": {"for=203.0.113.2"}, "X-Real-Ip": {"203.0.113.3"}}, trusted: true, want: "203.0.113.1"},
		"forwarded, not x-forwarded-for":      {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"6.6.6.6"}, "Forwarded": {"for=203.0.113.2"}}, trusted: true, from: "Forwarded", want: "203.0.113.2"},
		"x-real-ip, not x-forwarded-for":      {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"6.6.6.6"}, "X-Real-Ip": {"203.0.113.3"}}, trusted: true, from: "X-Real-IP", want: "203.0.113.3"},
		"x-real-ip proxy, client's own xff":   {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"6.6.6.6"}}, trusted: true, from: "X-Real-IP", want: "10.1.2.3"},
		"forwarded proxy, client's own xff":   {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"6.6.6.6"}}, trusted: true, from: "Forwarded", want: "10.1.2.3"},
		"x-forwarded-for proxy, client's own": {peer: "10.1.2.3:5000", header: http.Header{"Forwarded": {"for=6.6.6.6"}, "X-Real-Ip": {"6.6.6.7"}}, trusted: true, want: "10.1.2.3"},
	} {
		t.Run(name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tc.peer, Header: tc.header}
			var list []netip.Prefix
			if tc.trusted {
				list = trusted
			}
			rs, err := New(list, tc.from)
			if err != nil {
				t.Fatal(err)
			}
			if got := rs.Of(r); got != tc.want {
				t.Errorf("Of = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := ParseTrusted([]string{"10.0.0.0/33"}); err == nil {
		t.Error("a bad CIDR was accepted")
	}
	if _, err := ParseTrusted([]string{"proxy.example"}); err == nil {
		t.Error("a name was accepted")
	}
	for _, h := range []string{"X-Client-IP", "True-Client-IP", "X-Forwarded-For, X-Real-IP"} {
		if _, err := New(nil, h); err == nil {
			t.Errorf("header %q was accepted", h)
		}
	}
}

// TestTrustedMapped: a trusted CIDR or address written IPv4-mapped is
// the IPv4 one it maps, as client addresses are compared unmapped; a
// mapped CIDR shorter than the mapped range is refused.
func TestTrustedMapped(t *testing.T) {
	trusted, err := ParseTrusted([]string{"::ffff:10.0.0.0/104", "::ffff:192.0.2.7/128", "::ffff:198.51.100.9"})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("198.51.100.9/32")}
	if !slices.Equal(trusted, want) {
		t.Fatalf("ParseTrusted = %v, want %v", trusted, want)
	}
	rs, err := New(trusted, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, peer := range []string{"10.1.2.3:5000", "[::ffff:10.1.2.3]:5000", "192.0.2.7:1", "198.51.100.9:1"} {
		r := &http.Request{RemoteAddr: peer, Header: http.Header{"X-Forwarded-For": {"203.0.113.1"}}}
		if got := rs.Of(r); got != "203.0.113.1" {
			t.Errorf("from %s: Of = %q, want the forwarded client", peer, got)
		}
	}
	if _, err := ParseTrusted([]string{"::ffff:0:0/80"}); err == nil {
		t.Error("a mapped CIDR reaching past the mapped range was accepted")
	}
}

// TestKey: an IPv6 client is keyed by its /64, an IPv4 one by its address.
func TestKey(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.1":          "203.0.113.1",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":      "2001:db8:1:3::/64",
		"::1":                  "::/64",
		"fe80::1%eth0":         "fe80::/64",
		"not an address":       "not an address",
	} {
		if got := Key(in); got != want {
			t.Errorf("Key(%q) = %q, want %q", in, got, want)
		}
	}
}
