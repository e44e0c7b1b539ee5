package config

import (
	"strings"
	"testing"
	"time"
)

// TestValidate: the defaults are valid, and each section refuses what it
// always has, saying which setting is wrong.
func TestValidate(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	if !strings.HasPrefix(c.DataDir, "/") {
		t.Fatalf("data dir %q was not made absolute", c.DataDir)
	}
	for want, set := range map[string]func(c *Config){
		"listen address is empty":                    func(c *Config) { c.Listen = "" },
		"data dir is empty":                          func(c *Config) { c.DataDir = "" },
		`log format "xml"`:                           func(c *Config) { c.LogFormat = "xml" },
		`log level "loud"`:                           func(c *Config) { c.LogLevel = "loud" },
		`instance id "a b"`:                          func(c *Config) { c.InstanceID = "a b" },
		`replica id "a/b"`:                           func(c *Config) { c.ReplicaID = "a/b" },
		"lease ttl 500ms":                            func(c *Config) { c.LeaseTTL = 500 * time.Millisecond },
		`preview scheme "ftp"`:                       func(c *Config) { c.PreviewScheme = "ftp" },
		"proxy_network and open_network must differ": func(c *Config) { c.Egress.ProxyNetwork, c.Egress.OpenNetwork = "n", "n" },
		"proxy port 0":                               func(c *Config) { c.Egress.ProxyPort = 0 },
		"broker port 70000":                          func(c *Config) { c.Egress.BrokerPorts = []int{70000} },
		`host a: "mirror"`:                           func(c *Config) { c.Egress.Hosts = map[string][]string{"a": {"mirror"}} },
		"idle timeout 1s is shorter than 10s":        func(c *Config) { c.IdleTimeout = time.Second },
		"max keepalive 1s":                           func(c *Config) { c.MaxKeepalive = time.Second },
		"is longer than the max keepalive":           func(c *Config) { c.IdleTimeout, c.MaxKeepalive = 2*time.Hour, time.Hour },
		"disk quota":                                 func(c *Config) { c.MaxDiskMB = c.DiskMB - 1 },
		`allowed image "*"`:                          func(c *Config) { c.AllowedImages = []string{"*"} },
		"credit rates must not be negative":          func(c *Config) { c.CreditRateMemory = -1 },
		"credit first slice 0s":                      func(c *Config) { c.CreditFirstSlice = 0 },
		"new org credits -1":                         func(c *Config) { c.NewOrgCredits = -1 },
		"settle interval 2h0m0s":                     func(c *Config) { c.SettleInterval = 2 * time.Hour },
		"archive after 1s":                           func(c *Config) { c.ArchiveAfter = time.Second },
		"warm pool size 65":                          func(c *Config) { c.WarmPool = 65 },
		"warm_pools[0]: size -1":                     func(c *Config) { c.WarmPools = []WarmPool{{Size: -1}} },
		"warm_pools[0]: give a size, or min and max": func(c *Config) { c.WarmPools = []WarmPool{{Size: 1, Max: 2}} },
		"warm_pools[0]: min 3 and max 2":             func(c *Config) { c.WarmPools = []WarmPool{{Min: 3, Max: 2}} },
		"warm_pools[1]: min 1 and max 0":             func(c *Config) { c.WarmPools = []WarmPool{{Min: 0, Max: 64}, {Min: 1}} },
		"warm pool memory ceiling -1 MiB":            func(c *Config) { c.WarmPoolMemoryCeilingMB = -1 },
	} {
		c := Default()
		set(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	c = Default()
	c.Egress.Disabled, c.Egress.ProxyPort = true, 0
	if err := c.Validate(); err != nil {
		t.Errorf("a disabled egress's port is checked: %v", err)
	}
}

// TestInstanceSetting: instance names org/workspace/project or is empty;
// instance_template needs it; the environment sets both.
func TestInstanceSetting(t *testing.T) {
	for _, bad := range []InstanceConfig{
		{Instance: "acme/dev"}, {Instance: "acme//svc"}, {Instance: "a/b/c/d"}, {InstanceTemplate: "tpl"},
	} {
		c := Default()
		c.InstanceConfig = bad
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "instance") {
			t.Errorf("%+v: %v, want a refusal naming the setting", bad, err)
		}
	}
	c := Default()
	c.InstanceConfig = InstanceConfig{Instance: "acme/dev/svc", InstanceTemplate: "tpl"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if org, ws, project, ok := c.Names(); !ok || org != "acme" || ws != "dev" || project != "svc" {
		t.Fatalf("names %q %q %q %v", org, ws, project, ok)
	}
	e := Default()
	if err := e.LoadEnv(func(k string) (string, bool) {
		v, ok := map[string]string{"PADDOCK_INSTANCE": "acme/dev/svc", "PADDOCK_INSTANCE_TEMPLATE": "tpl"}[k]
		return v, ok
	}); err != nil {
		t.Fatal(err)
	}
	if e.Instance != "acme/dev/svc" || e.InstanceTemplate != "tpl" {
		t.Fatalf("from the environment: %+v", e.InstanceConfig)
	}
}
