package config

import (
	"strings"
	"testing"
)

func TestProviders(t *testing.T) {
	ps, err := ParseProviders("docker, gvisor=docker:runsc")
	if err != nil || len(ps) != 2 || ps[0] != (ProviderConfig{Name: "docker", Kind: "docker"}) ||
		ps[1] != (ProviderConfig{Name: "gvisor", Kind: "docker", Runtime: "runsc"}) {
		t.Fatalf("ParseProviders = %+v, %v", ps, err)
	}
	if _, err := ParseProviders("=docker"); err == nil {
		t.Fatal("a provider without a name was accepted")
	}

	valid := func(def string, ps ...ProviderConfig) error {
		c := Default()
		c.Provider, c.Providers = def, ps
		return c.validateProviders()
	}
	if err := valid("gvisor", ProviderConfig{Name: "docker", Kind: "docker"}, ProviderConfig{Name: "gvisor", Kind: "docker", Runtime: "runsc"}); err != nil {
		t.Fatalf("valid providers refused: %v", err)
	}
	if err := valid("docker"); err != nil {
		t.Fatalf("the single default provider refused: %v", err)
	}
	for name, tc := range map[string]struct {
		def  string
		ps   []ProviderConfig
		want string
	}{
		"default not listed": {"nope", []ProviderConfig{{Name: "docker", Kind: "docker"}}, "not one of the listed"},
		"listed twice":       {"a", []ProviderConfig{{Name: "a", Kind: "fake"}, {Name: "a", Kind: "fake"}}, "listed twice"},
		"unknown kind":       {"a", []ProviderConfig{{Name: "a", Kind: "vm"}}, "not one of docker, kubernetes, ssh, fake"},
		"bad name":           {"A b", []ProviderConfig{{Name: "A b", Kind: "fake"}}, "must be"},
		"runtime on fake":    {"a", []ProviderConfig{{Name: "a", Kind: "fake", Runtime: "runsc"}}, "for docker providers"},
		"no_pause on docker": {"a", []ProviderConfig{{Name: "a", Kind: "docker", NoPause: true}}, "for fake providers"},
	} {
		if err := valid(tc.def, tc.ps...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}
