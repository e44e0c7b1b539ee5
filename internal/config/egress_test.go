package config

import (
	"fmt"
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

// TestEgressHosts: PADDOCK_EGRESS_HOSTS entries are name=address or
// name=address:port, repeated for more ports; anything else fails.
func TestEgressHosts(t *testing.T) {
	load := func(v string) (Config, error) {
		c := Default()
		err := c.LoadEnv(func(k string) (string, bool) {
			if k == "PADDOCK_EGRESS_HOSTS" {
				return v, true
			}
			return "", false
		})
		if err == nil {
			err = c.Validate()
		}
		return c, err
	}
	c, err := load("registry.test=127.0.0.1:5000,registry.test=127.0.0.1:5001,web.test=10.0.0.1,v6.test=[::1]:8080")
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := c.Egress.HostAddrs()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(hosts); got != "map[registry.test:[127.0.0.1:5000 127.0.0.1:5001] v6.test:[[::1]:8080] web.test:[10.0.0.1:0]]" {
		t.Fatalf("HostAddrs = %s", got)
	}
	for _, bad := range []string{"a=127.0.0.1:0", "a=127.0.0.1:http", "a=mirror:80", "a=[fe80::1%eth0]:80", "a"} {
		if _, err := load(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
