package api

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// localLimits keep the limits' live state in this process: the state of
// a server that serves alone (an embedded store), which no request pays a
// database round trip for.
type localLimits struct {
	now func() time.Time

	mu      sync.Mutex
	buckets map[Rate]*buckets // by the rate they refill at
	held    map[Cap]int       // open sessions by cap (its Max zeroed)
}

var _ LimitState = (*localLimits)(nil)

func newLocalLimits(now func() time.Time) *localLimits {
	return &localLimits{now: now, buckets: map[Rate]*buckets{}, held: map[Cap]int{}}
}

// Take spends one token of key's bucket.
func (l *localLimits) Take(_ context.Context, key string, r Rate) (bool, time.Duration) {
	l.mu.Lock()
	b := l.buckets[r]
	if b == nil {
		b = newBuckets(r, l.now)
		l.buckets[r] = b
	}
	l.mu.Unlock()
	return b.take(key)
}

// Hold counts one more session against every cap of caps, or none.
func (l *localLimits) Hold(_ context.Context, caps []Cap) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range caps {
		if n := l.held[counter(c)]; n >= c.Max {
			return nil, &CapFull{Cap: c, Held: n}
		}
	}
	for _, c := range caps {
		l.held[counter(c)]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			for _, c := range caps {
				if l.held[counter(c)]--; l.held[counter(c)] <= 0 {
					delete(l.held, counter(c))
				}
			}
		})
	}, nil
}

// counter is the key a cap's count is kept under: its kind and key.
func counter(c Cap) Cap { return Cap{Kind: c.Kind, Key: c.Key} }

// buckets are token buckets by key. Buckets idle long enough to be full
// again are dropped, so the map holds only recent callers.
type buckets struct {
	rate  Rate
	now   func() time.Time
	mu    sync.Mutex
	m     map[string]*bucket
	swept time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newBuckets(r Rate, now func() time.Time) *buckets {
	return &buckets{rate: r, now: now, m: map[string]*bucket{}}
}

// take spends one token of key's bucket; when there is none it returns
// how long until there is.
func (b *buckets) take(key string) (ok bool, retry time.Duration) {
	if b == nil || b.rate.PerSecond < 0 {
		return true, 0
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now)
	e := b.m[key]
	if e == nil {
		e = &bucket{lim: rate.NewLimiter(rate.Limit(b.rate.PerSecond), max(b.rate.Burst, 1))}
		b.m[key] = e
	}
	e.seen = now
	r := e.lim.ReserveN(now, 1)
	if !r.OK() {
		return false, time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep drops buckets that have refilled, at most once a minute.
func (b *buckets) sweep(now time.Time) {
	if now.Sub(b.swept) < time.Minute || b.rate.PerSecond <= 0 {
		return
	}
	b.swept = now
	full := time.Duration(float64(max(b.rate.Burst, 1)) / b.rate.PerSecond * float64(time.Second))
	for k, e := range b.m {
		if now.Sub(e.seen) > full {
			delete(b.m, k)
		}
	}
}
