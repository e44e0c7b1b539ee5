package runtime

import (
	"math"
	"sync"
	"time"
)

// Adaptive warm pools. A pool configured with Max (and Min) instead of
// Size is kept at a target that follows its demand: the starts that
// looked for one of its sandboxes, claimed or not, counted as a rate
// (claims per second) that decays with a time constant (Window, a minute
// by default), times how long one refill of the pool takes (the last few
// provisionings, averaged). That product is the number of claims a refill
// has to cover; the target is the least number of sandboxes that a
// refill's worth of claims at that rate, arriving at random (Poisson),
// empties with a chance under one in twenty — so a rate too low to need a
// sandbox needs none, and a burst asks for several. The target stays
// between Min and Max, and the adaptive pools together never hold more
// memory (the sum of their sandboxes' memory limits, after what the
// fixed pools hold) than the installation's warm memory ceiling; the
// ceiling wins over Min. A fixed pool (Size) is kept at its size as
// before, whatever the ceiling.
//
// The rate is kept in memory by the replica that serves the starts; the
// filler (on the replica holding the warm-pool lease) reads its own.

// DefaultWarmMemoryCeilingMB bounds the memory limits adaptive warm pools
// hold together when the configuration sets no ceiling: 8 GiB.
const DefaultWarmMemoryCeilingMB = 8 << 10

const (
	// defaultWarmWindow is the time constant of the claim rate.
	defaultWarmWindow = time.Minute
	// defaultRefill is how long a refill is taken to last until one has
	// been measured.
	defaultRefill = time.Second
	// warmDryChance is the chance of running dry during a refill the
	// target allows.
	warmDryChance = 0.05
)

// warmSizer follows one adaptive pool's claim rate and refill time.
type warmSizer struct {
	window time.Duration

	mu     sync.Mutex
	rate   float64   // claims per second, decayed up to at
	at     time.Time // when rate was last brought up to date
	refill time.Duration
}

func newWarmSizer(window time.Duration) *warmSizer {
	if window <= 0 {
		window = defaultWarmWindow
	}
	return &warmSizer{window: window, refill: defaultRefill}
}

// decay brings the rate up to now; the lock is held.
func (z *warmSizer) decay(now time.Time) {
	if !z.at.IsZero() && now.After(z.at) {
		z.rate *= math.Exp(-now.Sub(z.at).Seconds() / z.window.Seconds())
	}
	if z.at.IsZero() || now.After(z.at) {
		z.at = now
	}
}

// claimed counts a start that looked for a warm sandbox at now.
func (z *warmSizer) claimed(now time.Time) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.decay(now)
	z.rate += 1 / z.window.Seconds()
}

// refilled records how long making one warm sandbox took.
func (z *warmSizer) refilled(d time.Duration) {
	if d <= 0 {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	z.refill = (3*z.refill + d) / 4
}

// target is the pool's size at now, between lo and hi.
func (z *warmSizer) target(now time.Time, lo, hi int) int {
	z.mu.Lock()
	z.decay(now)
	lambda := z.rate * z.refill.Seconds()
	z.mu.Unlock()
	return min(max(poissonQuantile(lambda, 1-warmDryChance, hi), lo), hi)
}

// poissonQuantile is the least k (at most limit) for which a Poisson
// variable of mean lambda is at most k with probability at least p.
func poissonQuantile(lambda, p float64, limit int) int {
	term := math.Exp(-lambda) // P(X = 0)
	cum := term
	k := 0
	for cum < p && k < limit {
		k++
		term *= lambda / float64(k)
		cum += term
	}
	return k
}

// warmSizes returns the size each pool is to be kept at now: a fixed
// pool's Size; an adaptive pool's target, after the ceiling.
func (w *warmPools) warmSizes(now time.Time) map[string]int {
	sizes := make(map[string]int, len(w.pools))
	budget := w.ceilingMB
	for _, rp := range w.pools {
		if rp.sizer == nil {
			sizes[rp.key] += rp.size
			budget -= int64(rp.size) * rp.config.MemoryMB
		}
	}
	for _, rp := range w.pools {
		if rp.sizer == nil {
			continue
		}
		n := rp.sizer.target(now, rp.min, rp.max)
		if rp.config.MemoryMB > 0 {
			n = min(n, int(max(budget, 0)/rp.config.MemoryMB))
		}
		budget -= int64(n) * rp.config.MemoryMB
		sizes[rp.key] += n
	}
	return sizes
}
