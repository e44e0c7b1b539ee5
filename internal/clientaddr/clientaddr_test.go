package clientaddr

import (
	"net/http"
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
		"forwarded":                {peer: "[fd00::1]:5000", header: http.Header{"Forwarded": {`for=203.0.113.9;proto=https, for="[2001:db8::5]:80"`}}, trusted: true, want: "2001:db8::5"},
		"forwarded obfuscated":     {peer: "10.1.2.3:5000", header: http.Header{"Forwarded": {"for=_hidden"}}, trusted: true, want: "10.1.2.3"},
		"forwarded without for":    {peer: "10.1.2.3:5000", header: http.Header{"Forwarded": {"proto=https"}}, trusted: true, want: "10.1.2.3"},
		"x-forwarded-for first":    {peer: "10.1.2.3:5000", header: http.Header{"X-Forwarded-For": {"203.0.113.1"}, "Forwarded": {"for=203.0.113.2"}, "X-Real-Ip": {"203.0.113.3"}}, trusted: true, want: "203.0.113.1"},
		"x-real-ip":                {peer: "10.1.2.3:5000", header: http.Header{"X-Real-Ip": {"203.0.113.3"}}, trusted: true, want: "203.0.113.3"},
	} {
		t.Run(name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tc.peer, Header: tc.header}
			var rs Resolver
			if tc.trusted {
				rs = New(trusted)
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
}
