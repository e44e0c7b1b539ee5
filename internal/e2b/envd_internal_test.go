package e2b

import (
	"net/http"
	"testing"
)

// TestEnvdHeaders: what envd reads reaches the agent; the caller's
// credentials, cookies and E2B's routing headers do not, nor an
// Authorization header that is not a Basic user.
func TestEnvdHeaders(t *testing.T) {
	in := http.Header{}
	for name, v := range map[string]string{
		"Content-Type": "application/connect+json", "Connect-Protocol-Version": "1", "Connect-Timeout-Ms": "5000",
		"Keepalive-Ping-Interval": "50", "Accept-Encoding": "gzip", "User-Agent": "e2b-js-sdk/2.51.0",
		"Authorization": "Basic cm9vdDo=", "X-Access-Token": "tok", "X-Api-Key": "pdk_x", "Cookie": "paddock_console=s",
		"E2b-Sandbox-Id": "id", "E2b-Sandbox-Port": "49983", "E2b-Traffic-Access-Token": "t", "X-Forwarded-For": "1.2.3.4",
		"Content-Encoding": "gzip", "Range": "bytes=0-9", "If-None-Match": `"e"`, "If-Modified-Since": "Mon, 02 Jan 2006 15:04:05 GMT",
		"X-Metadata-Owner": "ci",
	} {
		in.Set(name, v)
	}
	out := envdHeaders(in)
	for _, kept := range []string{"Content-Type", "Connect-Protocol-Version", "Connect-Timeout-Ms", "Keepalive-Ping-Interval", "Accept-Encoding", "User-Agent", "Authorization",
		"Content-Encoding", "Range", "If-None-Match", "If-Modified-Since", "X-Metadata-Owner"} {
		if out.Get(kept) != in.Get(kept) {
			t.Errorf("%s: %q, want %q", kept, out.Get(kept), in.Get(kept))
		}
	}
	for _, dropped := range []string{"X-Access-Token", "X-Api-Key", "Cookie", "E2b-Sandbox-Id", "E2b-Sandbox-Port", "E2b-Traffic-Access-Token", "X-Forwarded-For"} {
		if v := out.Get(dropped); v != "" {
			t.Errorf("%s reaches the agent: %q", dropped, v)
		}
	}
	in.Set("Authorization", "Bearer pdk_x")
	if v := envdHeaders(in).Get("Authorization"); v != "" {
		t.Errorf("a bearer credential reaches the agent: %q", v)
	}
}
