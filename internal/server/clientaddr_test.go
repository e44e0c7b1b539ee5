package server_test

import (
	"net/http"
	"testing"
)

// TestTrustedProxiesSetting: trusted_proxies and trusted_proxy_header
// reach the API. With none (the default) a request's X-Forwarded-For is
// ignored, and unauthenticated calls that claim different addresses
// share the peer's bucket; with loopback trusted, each forwarded client
// has its own; with a proxy that writes X-Real-IP, X-Forwarded-For is
// ignored again.
func TestTrustedProxiesSetting(t *testing.T) {
	status := func(url, forwardedFor string) int {
		req, err := http.NewRequest("GET", url+"/api/v1/orgs", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", forwardedFor)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		trusted []string
		header  string
		want    [3]int // 203.0.113.1, 203.0.113.2, 203.0.113.1 again
	}{
		{nil, "", [3]int{401, 429, 429}},
		{[]string{"127.0.0.0/8", "::1"}, "", [3]int{401, 401, 429}},
		{[]string{"127.0.0.0/8", "::1"}, "X-Real-IP", [3]int{401, 429, 429}},
	} {
		cfg := testConfig(t, t.TempDir(), "127.0.0.1:0")
		cfg.Limits.RatePerClient, cfg.Limits.BurstPerClient = 1.0/3600, 1
		cfg.TrustedProxies, cfg.TrustedProxyHeader = tc.trusted, tc.header
		url, _, stop := serve(t, cfg)
		for i, xff := range []string{"203.0.113.1", "203.0.113.2", "203.0.113.1"} {
			if got := status(url, xff); got != tc.want[i] {
				t.Errorf("trusted %v (%q), X-Forwarded-For %s: %d, want %d", tc.trusted, tc.header, xff, got, tc.want[i])
			}
		}
		stop()
	}
}
