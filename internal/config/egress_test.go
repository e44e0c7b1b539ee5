package config

import (
	"strings"
	"testing"
)

// TestAllowInternal: PADDOCK_EGRESS_ALLOW_INTERNAL is a list of CIDRs and
// addresses, and anything else fails validation.
func TestAllowInternal(t *testing.T) {
	load := func(v string) (Config, error) {
		c := Default()
		err := c.LoadEnv(func(k string) (string, bool) {
			if k == "PADDOCK_EGRESS_ALLOW_INTERNAL" {
				return v, true
			}
			return "", false
		})
		if err == nil {
			err = c.Validate()
		}
		return c, err
	}
	c, err := load("10.20.0.0/16, 192.168.1.5,fd00::1")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Egress.AllowInternalPrefixes()
	if err != nil || len(ps) != 3 || ps[0].String() != "10.20.0.0/16" || ps[1].String() != "192.168.1.5/32" || ps[2].String() != "fd00::1/128" {
		t.Fatalf("AllowInternalPrefixes = %v, %v", ps, err)
	}
	for _, bad := range []string{"nope", "10.0.0.0/33", "fe80::1%eth0", "127.0.0.0/8", "127.0.0.1", "::1", "::ffff:127.0.0.1", "0.0.0.0"} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "allow_internal") {
			t.Errorf("%q: %v, want an allow_internal error", bad, err)
		}
	}
}
