package runtime

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
)

// TestWarmPoolConfig checks that warm pools resolve against the defaults
// as a project would, so a project with default settings matches the
// default pool, and that a pool the installation cannot serve is refused
// before the server starts.
func TestWarmPoolConfig(t *testing.T) {
	reg := provider.NewRegistry()
	reg.Register(fake.New(fake.Config{}))
	svc := func(pools ...WarmPool) *Service {
		return New(Config{Providers: reg, Defaults: Defaults{Image: "paddock/base:1", AllowedImages: []string{"other:1", "unused:*"}}, WarmPools: pools})
	}

	s := svc(WarmPool{Size: 2}, WarmPool{Image: "other:1", MemoryMB: 256, Size: 1}, WarmPool{Image: "unused:1"})
	if err := s.ValidateWarmPools(); err != nil {
		t.Fatalf("valid pools refused: %v", err)
	}
	if pools, _ := s.resolvedPools(); len(pools) != 2 {
		t.Fatalf("%d pools resolved, want 2 (a pool of size 0 is none)", len(pools))
	}
	cfg, err := s.resolveConfig(ConfigRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.warmTemplate("fake", store.Runtime{Config: cfg}); !ok {
		t.Fatal("a runtime with default settings does not match the default pool")
	}
	cfg.MemoryMB *= 2
	if _, ok := s.warmTemplate("fake", store.Runtime{Config: cfg}); ok {
		t.Fatal("a runtime with other resources matches the default pool")
	}

	for name, bad := range map[string]WarmPool{
		"bad image":        {Image: "--privileged", Size: 1},
		"unknown provider": {Provider: "nope", Size: 1},
		"tiny memory":      {MemoryMB: 1, Size: 1},
	} {
		if err := svc(bad).ValidateWarmPools(); !errors.Is(err, errdefs.ErrInvalidArgument) && !errdefs.IsNotFound(err) {
			t.Errorf("%s: ValidateWarmPools = %v, want an invalid-argument or not-found error", name, err)
		}
	}
	// One template, one pool: a claim must know whether it is running.
	if err := svc(WarmPool{Size: 1}, WarmPool{Size: 1, Running: true}).ValidateWarmPools(); err == nil {
		t.Error("two pools of one template (one running) were accepted")
	}
}
