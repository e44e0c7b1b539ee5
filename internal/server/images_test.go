package server

import (
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/config"
)

// TestImageBuildsOnTheirEngine: the images a server builds are built on
// its default provider's engine and speak for the docker providers there
// (runc and gVisor), not for one on another engine nor a fake.
func TestImageBuildsOnTheirEngine(t *testing.T) {
	cfg := config.Config{ProvidersConfig: config.ProvidersConfig{DockerHost: "unix:///run/docker.sock", Providers: []config.ProviderConfig{
		{Name: "docker", Kind: "docker"},
		{Name: "gvisor", Kind: "docker", Runtime: "runsc"},
		{Name: "remote", Kind: "docker", DockerHost: "tcp://build.invalid:2376"},
		{Name: "fake", Kind: "fake"},
	}}}
	if got := sameEngine(&cfg.ProvidersConfig, "docker"); !slices.Equal(got, []string{"docker", "gvisor"}) {
		t.Fatalf("providers on the default engine: %v", got)
	}
	if got := sameEngine(&cfg.ProvidersConfig, "remote"); !slices.Equal(got, []string{"remote"}) {
		t.Fatalf("providers on the remote engine: %v", got)
	}
}
