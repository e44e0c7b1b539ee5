package runtime

import (
	"errors"
	"slices"
	"strings"
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
	cfg, err := s.resolveConfig(t.Context(), "", ConfigRequest{})
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

// TestWarmPoolOnAProviderThatCannotPause: a pool kept paused on a
// provider that cannot pause is refused before the server serves, saying
// to keep it running; a running one is served, and a claim takes its
// sandbox as it runs (no resume).
func TestWarmPoolOnAProviderThatCannotPause(t *testing.T) {
	reg := provider.NewRegistry()
	reg.Register(fake.New(fake.Config{NoPause: true}))
	s := New(Config{Providers: reg, Defaults: Defaults{Image: "paddock/base:1"}, WarmPools: []WarmPool{{Size: 1}}})
	err := s.ValidateWarmPools()
	if pe, ok := errdefs.Public(err); !errors.Is(err, errdefs.ErrInvalidArgument) || !ok || pe.Code != CodeWarmPoolPaused ||
		!strings.Contains(err.Error(), "cannot pause") || !strings.Contains(err.Error(), "warm_pool_running") {
		t.Fatalf("a paused pool on a provider that cannot pause: %v, want invalid %s naming warm_pool_running", err, CodeWarmPoolPaused)
	}

	r := newRigWith(t, rigOptions{Fake: fake.Config{NoPause: true}, WarmPools: []WarmPool{{Size: 1, Running: true}}})
	r.must(r.s.ValidateWarmPools())
	if made, err := r.s.FillWarmPools(r.ctx); err != nil || made != 1 {
		t.Fatalf("filled %d, %v; want 1", made, err)
	}
	if live := r.fake.Live(); len(live) != 1 || live[0].Status.State != provider.StateRunning {
		t.Fatalf("warm compute = %+v, want one running", live)
	}
	rt := r.started("p", ConfigRequest{})
	if pv := r.s.Provisions(); len(pv) == 0 || !pv[0].Warm {
		t.Fatalf("the start did not claim the running warm sandbox: %+v", pv)
	}
	if got, _ := r.get(rt.ID); got.Status != store.RuntimeRunning || r.fake.Calls(fake.OpResume) != 0 {
		t.Fatalf("runtime %s after %d resumes, want running with none", got.Status, r.fake.Calls(fake.OpResume))
	}
}

// unlabelled is a provider with nothing to relabel a claimed warm sandbox
// by, as Docker's (the fake relabels, as Kubernetes's does).
type unlabelled struct{ provider.Provider }

// TestRunningClaimIsOneTransaction: claiming a running pool's sandbox on
// a provider with nothing to relabel is one transaction, the reserve,
// which marks the row and the runtime running with the expiry window
// open; subscribers still hear starting, then running.
func TestRunningClaimIsOneTransaction(t *testing.T) {
	r := newRigWith(t, rigOptions{Fake: fake.Config{NoPause: true}, WarmPools: []WarmPool{{Size: 1, Running: true}},
		Wrap: func(f *fake.Provider) provider.Provider { return unlabelled{f} }})
	if made, err := r.s.FillWarmPools(r.ctx); err != nil || made != 1 {
		t.Fatalf("filled %d, %v; want 1", made, err)
	}
	events := make(chan Event, 16)
	sub := r.s.Subscribe("test", func(ev Event) { events <- ev })
	defer sub.Unsubscribe()
	rt := r.started("p", ConfigRequest{})
	pv := r.s.Provisions()
	if len(pv) == 0 || !pv[0].Warm {
		t.Fatalf("the start did not claim the running warm sandbox: %+v", pv)
	}
	var steps []string
	for _, st := range pv[0].Steps {
		steps = append(steps, st.Name)
	}
	if !slices.Equal(steps, []string{"resolve_secrets", "reserve"}) {
		t.Fatalf("the claim's steps %v, want the reserve alone after the secrets", steps)
	}
	got, sb := r.get(rt.ID)
	if got.Status != store.RuntimeRunning || sb.State != store.SandboxRunning || sb.RunningSince.IsZero() || !sb.ExpiresAt.After(sb.RunningSince) {
		t.Fatalf("after the claim: runtime %s, row %s running since %v expiring %v", got.Status, sb.State, sb.RunningSince, sb.ExpiresAt)
	}
	var kinds []EventKind
	for len(kinds) < 2 {
		ev := <-events
		if ev.Runtime.ID != rt.ID || (ev.Kind != EventStarting && ev.Kind != EventRunning) {
			continue
		}
		kinds = append(kinds, ev.Kind)
		if ev.Kind == EventStarting && (ev.Runtime.Status != store.RuntimeStarting || ev.Sandbox.State != store.SandboxStarting ||
			!ev.Sandbox.RunningSince.IsZero() || !ev.Sandbox.ExpiresAt.IsZero()) {
			t.Fatalf("the starting event tells of %s and %s, running since %v, expiring %v; want the rows before they were marked running",
				ev.Runtime.Status, ev.Sandbox.State, ev.Sandbox.RunningSince, ev.Sandbox.ExpiresAt)
		}
	}
	if kinds[0] != EventStarting || kinds[1] != EventRunning {
		t.Fatalf("events %v, want starting then running", kinds)
	}
}
