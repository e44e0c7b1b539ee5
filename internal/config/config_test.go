package config

import (
	"slices"
	"strings"
	"testing"
)

// TestTrustedProxies: PADDOCK_TRUSTED_PROXIES is a list of CIDRs or
// addresses, none by default; anything else is refused at start.
func TestTrustedProxies(t *testing.T) {
	c := Default()
	if len(c.TrustedProxies) != 0 {
		t.Fatalf("trusted by default: %v", c.TrustedProxies)
	}
	env := map[string]string{"PADDOCK_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7,fd00::/8"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if err := c.LoadEnv(lookup); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.TrustedProxies, []string{"10.0.0.0/8", "192.0.2.7", "fd00::/8"}) {
		t.Fatalf("trusted proxies %v", c.TrustedProxies)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("valid trusted proxies refused: %v", err)
	}
	c.TrustedProxies = []string{"proxy.example"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "proxy.example") {
		t.Fatalf("a name as a trusted proxy: %v", err)
	}
}

// TestTrustedProxyHeader: PADDOCK_TRUSTED_PROXY_HEADER names the one
// header the trusted proxies write, X-Forwarded-For by default; a header
// that is not X-Forwarded-For, Forwarded or X-Real-IP is refused at
// start.
func TestTrustedProxyHeader(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("the default header refused: %v", err)
	}
	env := map[string]string{"PADDOCK_TRUSTED_PROXY_HEADER": "X-Real-IP"}
	if err := c.LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if c.TrustedProxyHeader != "X-Real-IP" {
		t.Fatalf("trusted proxy header %q", c.TrustedProxyHeader)
	}
	for _, h := range []string{"X-Forwarded-For", "forwarded", "X-Real-IP"} {
		c.TrustedProxyHeader = h
		if err := c.Validate(); err != nil {
			t.Errorf("%s refused: %v", h, err)
		}
	}
	for _, h := range []string{"X-Client-IP", "X-Forwarded-For,X-Real-IP"} {
		c.TrustedProxyHeader = h
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "trusted proxy header") {
			t.Errorf("%s: %v", h, err)
		}
	}
}
