package fake_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/provider/providertest"
	"github.com/paddockhq/paddock/internal/providers/fake"
)

// TestConformanceThroughBreaker: a breaker in front of a provider changes
// nothing a caller sees while the backend is healthy.
func TestConformanceThroughBreaker(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		New: func(t *testing.T) provider.Provider {
			b := provider.NewBreaker(fake.New(fake.Config{}), provider.BreakerConfig{})
			t.Cleanup(b.Close)
			return b
		},
		Spec: spec,
		WorkspaceExists: func(t *testing.T, p provider.Provider, name string) bool {
			return workspaceExists(t, p.(*provider.Breaker).Unwrap(), name)
		},
	})
}

// TestBreaker: backend failures in a row open it (calls then fail fast with
// provider_circuit_open, the provider is not called), a caller's mistakes
// do not, and a probe after the cooldown closes it again.
func TestBreaker(t *testing.T) { synctest.Test(t, testBreaker) }

// testBreaker is TestBreaker in a synctest bubble: its sleeps move the
// bubble's clock.
func testBreaker(t *testing.T) {
	ctx := context.Background()
	f := fake.New(fake.Config{})
	var mu sync.Mutex
	var states []provider.BreakerState
	b := provider.NewBreaker(f, provider.BreakerConfig{
		Failures: 2, Cooldown: 50 * time.Millisecond,
		OnState: func(_ string, s provider.BreakerState) { mu.Lock(); states = append(states, s); mu.Unlock() },
	})
	t.Cleanup(b.Close)
	down := errdefs.Unavailable(provider.CodeProviderUnavailable, "the engine is not reachable")

	// Caller mistakes never open it.
	for range 5 {
		if _, err := b.Inspect(ctx, provider.Handle{Provider: "fake", ID: "nope"}); !errdefs.IsNotFound(err) && !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Fatalf("Inspect of an unknown handle = %v", err)
		}
	}
	if st, _ := b.State(); st != provider.BreakerClosed {
		t.Fatalf("state after caller mistakes = %v, want closed", st)
	}

	s := spec(t)
	f.FailNext(fake.OpCreate, down)
	f.FailNext(fake.OpCreate, down)
	for range 2 {
		if _, err := b.Create(ctx, s); !errors.Is(err, down) {
			t.Fatalf("Create = %v, want the backend failure", err)
		}
	}
	if st, _ := b.State(); st != provider.BreakerOpen {
		t.Fatalf("state after 2 backend failures = %v, want open", st)
	}
	calls := f.Calls(fake.OpCreate)
	_, err := b.Create(ctx, s)
	if pe, ok := errdefs.Public(err); !ok || pe.Code != provider.CodeCircuitOpen || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("Create while open = %v, want 503 %s", err, provider.CodeCircuitOpen)
	}
	if f.Calls(fake.OpCreate) != calls {
		t.Fatal("the breaker let a call through while open")
	}

	// The fake has no Ping: the first call after the cooldown is the
	// probe, and its success closes the breaker.
	time.Sleep(60 * time.Millisecond)
	h, err := b.Create(ctx, s)
	if err != nil {
		t.Fatalf("the probe Create = %v", err)
	}
	t.Cleanup(func() { _ = f.Destroy(ctx, h) })
	if st, _ := b.State(); st != provider.BreakerClosed {
		t.Fatalf("state after a good probe = %v, want closed", st)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []provider.BreakerState{provider.BreakerClosed, provider.BreakerOpen, provider.BreakerHalfOpen, provider.BreakerClosed}
	if len(states) != len(want) {
		t.Fatalf("states = %v, want %v", states, want)
	}
	for i := range want {
		if states[i] != want[i] {
			t.Fatalf("states = %v, want %v", states, want)
		}
	}
}

// TestBreakerCountsOnlyTheBackend: a timeout of ordinary work (a caller's
// deadline on a slow pull) does not count, a ping's does, and an answer
// from the backend breaks a run of failures.
func TestBreakerCountsOnlyTheBackend(t *testing.T) {
	ctx := context.Background()
	f := fake.New(fake.Config{})
	b := provider.NewBreaker(f, provider.BreakerConfig{Failures: 2, Cooldown: time.Hour})
	t.Cleanup(b.Close)
	slow := errdefs.Unavailable(provider.CodeProviderTimeout, "the engine did not answer in time")
	down := errdefs.Unavailable(provider.CodeProviderUnavailable, "the engine is not reachable")
	s := spec(t)
	for range 3 {
		f.FailNext(fake.OpCreate, slow)
		_, _ = b.Create(ctx, s)
	}
	if st, _ := b.State(); st != provider.BreakerClosed {
		t.Fatalf("state after slow creates = %v, want closed", st)
	}
	// down, an answer, down: not two in a row.
	f.FailNext(fake.OpCreate, down)
	_, _ = b.Create(ctx, s)
	_, _ = b.Inspect(ctx, provider.Handle{Provider: "fake", ID: "nope"}) // the backend answers: not found
	f.FailNext(fake.OpCreate, down)
	_, _ = b.Create(ctx, s)
	if st, _ := b.State(); st != provider.BreakerClosed {
		t.Fatalf("state after failures that were not in a row = %v, want closed", st)
	}
	f.FailNext(fake.OpCreate, down)
	_, _ = b.Create(ctx, s)
	if st, _ := b.State(); st != provider.BreakerOpen {
		t.Fatalf("state after two failures in a row = %v, want open", st)
	}
	if err := b.Available(); err == nil {
		t.Fatal("Available while open and cooling down = nil, want the fail-fast error")
	}
}

// TestBreakerAvailableForTheProbe: a provider without Ping is probed by
// its first call after the cooldown, so an action may go ahead then.
func TestBreakerAvailableForTheProbe(t *testing.T) { synctest.Test(t, testBreakerAvailableForTheProbe) }

// testBreakerAvailableForTheProbe is TestBreakerAvailableForTheProbe in a
// synctest bubble: its sleeps move the bubble's clock.
func testBreakerAvailableForTheProbe(t *testing.T) {
	ctx := context.Background()
	f := fake.New(fake.Config{})
	b := provider.NewBreaker(f, provider.BreakerConfig{Failures: 1, Cooldown: 20 * time.Millisecond})
	t.Cleanup(b.Close)
	f.FailNext(fake.OpCreate, errdefs.Unavailable(provider.CodeProviderUnavailable, "down"))
	_, _ = b.Create(ctx, spec(t))
	if b.Available() == nil {
		t.Fatal("Available right after opening = nil")
	}
	time.Sleep(30 * time.Millisecond)
	if err := b.Available(); err != nil {
		t.Fatalf("Available after the cooldown = %v, want nil (the action is the probe)", err)
	}
	h, err := b.Create(ctx, spec(t))
	if err != nil {
		t.Fatalf("the probe Create = %v", err)
	}
	t.Cleanup(func() { _ = f.Destroy(ctx, h) })
	if st, _ := b.State(); st != provider.BreakerClosed {
		t.Fatalf("state after a good probe = %v, want closed", st)
	}
}
