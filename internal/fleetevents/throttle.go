package fleetevents

import (
	"sync"
	"time"
)

// DefaultEgressPerSecond is how many egress decisions of one runtime the
// streams hear a second by default.
const DefaultEgressPerSecond = 20

// throttle bounds the egress decisions of each runtime that reach the
// streams and the Bus: a token bucket per runtime, Config.EgressPerSecond
// a second with as many in a burst. A decision over it is not fanned out
// but counted, and the count rides on the runtime's next decision
// (Event.Suppressed); the store's egress log keeps every decision.
type throttle struct {
	rate int // negative: no bound
	now  func() time.Time

	mu    sync.Mutex
	m     map[string]*egressBucket
	swept time.Time
}

// egressBucket is one runtime's tokens as of at, and the decisions
// suppressed since the last one that went out.
type egressBucket struct {
	tokens     float64
	at         time.Time
	suppressed int
}

// idleBucket is how long a runtime's bucket outlives its last decision: a
// full bucket is the same as none.
const idleBucket = time.Minute

func newThrottle(rate int, now func() time.Time) *throttle {
	if rate == 0 {
		rate = DefaultEgressPerSecond
	}
	if now == nil {
		now = time.Now
	}
	return &throttle{rate: rate, now: now, m: map[string]*egressBucket{}}
}

// admit says whether a decision of runtime goes out, and if so how many
// of the runtime's decisions before it did not.
func (t *throttle) admit(runtime string) (ok bool, suppressed int) {
	if t.rate < 0 {
		return true, 0
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep(now)
	b := t.m[runtime]
	if b == nil {
		b = &egressBucket{tokens: float64(t.rate), at: now}
		t.m[runtime] = b
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(float64(t.rate), b.tokens+d.Seconds()*float64(t.rate))
	}
	b.at = now
	if b.tokens < 1 {
		b.suppressed++
		return false, 0
	}
	b.tokens--
	suppressed, b.suppressed = b.suppressed, 0
	return true, suppressed
}

// sweep forgets, at most once per idleBucket, the runtimes idle for it
// (a count of suppressed decisions that no decision followed within it
// is forgotten with them).
func (t *throttle) sweep(now time.Time) {
	if now.Sub(t.swept) < idleBucket {
		return
	}
	t.swept = now
	for id, b := range t.m {
		if now.Sub(b.at) > idleBucket {
			delete(t.m, id)
		}
	}
}
