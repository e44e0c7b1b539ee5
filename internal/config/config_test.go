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
