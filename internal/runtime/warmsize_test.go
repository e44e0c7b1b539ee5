package runtime

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
)

// TestPoissonQuantile: the target is the least size a refill's worth of
// claims empties with a chance under one in twenty.
func TestPoissonQuantile(t *testing.T) {
	for _, c := range []struct {
		lambda float64
		want   int
	}{
		{0, 0},
		{0.06, 1}, // P(X=0) = 0.942: one is needed
		{0.05, 0}, // P(X=0) = 0.951: none is
		{0.5, 2},  // P(X<=1) = 0.910, P(X<=2) = 0.986
		{3, 6},    // P(X<=5) = 0.916, P(X<=6) = 0.966
		{1e6, 9},  // capped by the limit
	} {
		if got := poissonQuantile(c.lambda, 1-warmDryChance, 9); got != c.want {
			t.Errorf("poissonQuantile(%g) = %d, want %d", c.lambda, got, c.want)
		}
	}
}

// TestWarmSizerFollowsClaims drives one adaptive pool's sizer on a fake
// clock: idle it is at its min; a burst of claims grows it toward its max,
// never past it; idle again, it decays back to its min and no lower.
func TestWarmSizerFollowsClaims(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	z := newWarmSizer(time.Minute)
	const lo, hi = 1, 5
	if got := z.target(now, lo, hi); got != lo {
		t.Fatalf("idle pool's target %d, want its min %d", got, lo)
	}
	// A burst: 120 claims in 12 s, refills taking 2 s each.
	z.refilled(2 * time.Second)
	z.refilled(2 * time.Second)
	peak := lo
	for i := range 120 {
		z.claimed(now.Add(time.Duration(i) * 100 * time.Millisecond))
		peak = max(peak, z.target(now.Add(time.Duration(i)*100*time.Millisecond), lo, hi))
	}
	now = now.Add(12 * time.Second)
	if peak != hi {
		t.Fatalf("a burst of 10 claims a second grew the pool to %d, want its max %d", peak, hi)
	}
	// Idle: the target falls, step by step, to the min and stays there.
	prev := hi
	for step := 0; ; step++ {
		if step > 100 {
			t.Fatal("an idle pool did not shrink back to its min")
		}
		now = now.Add(10 * time.Second)
		got := z.target(now, lo, hi)
		if got > prev || got < lo {
			t.Fatalf("idle for %s: target %d after %d (min %d)", time.Duration(step+1)*10*time.Second, got, prev, lo)
		}
		if prev = got; got == lo {
			break
		}
	}
	if got := z.target(now.Add(time.Hour), lo, hi); got != lo {
		t.Fatalf("an hour idle: target %d, want %d", got, lo)
	}
	// A clock read out of order (another replica's) does not move it back.
	z.claimed(now.Add(-time.Minute))
	if got := z.target(now, 0, hi); got > 1 {
		t.Fatalf("one claim asks for %d", got)
	}
}

// TestWarmSizesUnderTheCeiling: adaptive pools hold no more memory than
// the ceiling leaves after the fixed pools (which keep their size, over
// the ceiling or not), in configuration order; the ceiling wins over a
// min.
func TestWarmSizesUnderTheCeiling(t *testing.T) {
	now := time.Now()
	busy := func() *warmSizer {
		z := newWarmSizer(time.Minute)
		for range 600 {
			z.claimed(now)
		}
		return z
	}
	mem := func(mb int64) resolvedPool {
		rp := resolvedPool{}
		rp.config.MemoryMB = mb
		return rp
	}
	fixed := mem(1024)
	fixed.key, fixed.size = "fixed", 2
	a := mem(1024)
	a.key, a.min, a.max, a.sizer = "a", 1, 8, busy()
	b := mem(512)
	b.key, b.min, b.max, b.sizer = "b", 2, 8, busy()
	for _, c := range []struct {
		ceiling int64
		want    map[string]int
	}{
		{64 << 10, map[string]int{"fixed": 2, "a": 8, "b": 8}},
		{6 << 10, map[string]int{"fixed": 2, "a": 4, "b": 0}},
		{5<<10 + 512, map[string]int{"fixed": 2, "a": 3, "b": 1}},
		{1 << 10, map[string]int{"fixed": 2, "a": 0, "b": 0}},
	} {
		w := &warmPools{pools: []resolvedPool{fixed, a, b}, ceilingMB: c.ceiling}
		got := w.warmSizes(now)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("ceiling %d MB: sizes %v, want %v", c.ceiling, got, c.want)
		}
	}
}

// TestAdaptiveWarmPoolConfig: a pool gives a size, or min and max; not
// both, and min no more than max.
func TestAdaptiveWarmPoolConfig(t *testing.T) {
	reg := provider.NewRegistry()
	reg.Register(fake.New(fake.Config{}))
	svc := func(pools ...WarmPool) *Service {
		return New(Config{Providers: reg, Defaults: Defaults{Image: "paddock/base:1"}, WarmPools: pools})
	}
	if err := svc(WarmPool{Max: 3}, WarmPool{MemoryMB: 256, Min: 1, Max: 1}).ValidateWarmPools(); err != nil {
		t.Fatalf("valid adaptive pools refused: %v", err)
	}
	for name, bad := range map[string]WarmPool{
		"size and max":     {Size: 1, Max: 2},
		"min above max":    {Min: 3, Max: 2},
		"min without max":  {Min: 1},
		"negative minimum": {Min: -1, Max: 2},
	} {
		if err := svc(bad).ValidateWarmPools(); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("%s: ValidateWarmPools = %v, want invalid argument", name, err)
		}
	}
}

// TestAdaptiveWarmPoolGrowsAndShrinks: on the service, in a synctest
// bubble (the clock moves with time.Sleep): an adaptive pool with min 0
// starts empty; a burst of starts, cold while it is empty, grows it; idle,
// reconciliation shrinks it back to its min.
func TestAdaptiveWarmPoolGrowsAndShrinks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRigWith(t, rigOptions{WarmPools: []WarmPool{{Min: 0, Max: 4, Window: 10 * time.Second}}})
		made, err := r.s.FillWarmPools(r.ctx)
		r.must(err)
		if made != 0 {
			t.Fatalf("an idle pool of min 0 made %d", made)
		}
		for i := range 6 {
			r.started(fmt.Sprintf("p%d", i), ConfigRequest{})
		}
		select {
		case <-r.s.WarmKicks():
		default:
			t.Fatal("starts that found the pool empty did not ask for a refill")
		}
		made, err = r.s.FillWarmPools(r.ctx)
		r.must(err)
		if made < 2 {
			t.Fatalf("a burst of 6 starts grew the pool by %d, want at least 2", made)
		}
		views, err := r.s.WarmPoolViews(r.ctx)
		r.must(err)
		if len(views) != 1 || views[0].Size != made || len(views[0].Sandboxes) != made {
			t.Fatalf("the pool's view %+v, want size and sandboxes %d", views, made)
		}
		time.Sleep(5 * time.Minute) // idle
		discarded, err := r.s.ReconcileWarm(r.ctx)
		r.must(err)
		if discarded != made {
			t.Fatalf("idle, reconciliation discarded %d of %d", discarded, made)
		}
		if n, _ := r.s.FillWarmPools(r.ctx); n != 0 {
			t.Fatalf("idle, the filler made %d", n)
		}
	})
}
