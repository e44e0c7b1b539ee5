package api

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/clientaddr"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// Limits protect the server from any one caller. Zero fields take the
// defaults below; a negative rate or cap turns that limit off.
type Limits struct {
	// PerKey and PerClient are token buckets: one per credential (an API
	// key or a session), which authenticated calls draw from, and one per
	// client address, which only calls without a credential or with a
	// refused one draw from. A request over its bucket answers 429 with
	// Retry-After.
	PerKey    Rate
	PerClient Rate
	// Concurrent exec streams (foreground execs and attaches) and
	// terminals, per runtime and per user (the key's holder, or the key).
	ExecPerRuntime      int
	ExecPerUser         int
	TerminalsPerRuntime int
	TerminalsPerUser    int
	// Request bodies: JSON on every route; file uploads (PUT …/files,
	// POST …/files/tar); capability bundles.
	JSONBodyBytes   int64
	UploadBodyBytes int64
	BundleBodyBytes int64
}

// Rate is a token bucket: PerSecond tokens a second, at most Burst.
type Rate struct {
	PerSecond float64
	Burst     int
}

// Defaults for Limits.
var DefaultLimits = Limits{
	PerKey:              Rate{PerSecond: 100, Burst: 500},
	PerClient:           Rate{PerSecond: 200, Burst: 1000},
	ExecPerRuntime:      32,
	ExecPerUser:         64,
	TerminalsPerRuntime: 8,
	TerminalsPerUser:    16,
	JSONBodyBytes:       1 << 20,
	UploadBodyBytes:     1 << 30,
	BundleBodyBytes:     binding.MaxBundleBytes,
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	l.PerKey = l.PerKey.withDefaults(d.PerKey)
	l.PerClient = l.PerClient.withDefaults(d.PerClient)
	for _, f := range []struct {
		v *int
		d int
	}{
		{&l.ExecPerRuntime, d.ExecPerRuntime}, {&l.ExecPerUser, d.ExecPerUser},
		{&l.TerminalsPerRuntime, d.TerminalsPerRuntime}, {&l.TerminalsPerUser, d.TerminalsPerUser},
	} {
		if *f.v == 0 {
			*f.v = f.d
		}
	}
	for _, f := range []struct {
		v *int64
		d int64
	}{
		{&l.JSONBodyBytes, d.JSONBodyBytes}, {&l.UploadBodyBytes, d.UploadBodyBytes}, {&l.BundleBodyBytes, d.BundleBodyBytes},
	} {
		if *f.v <= 0 {
			*f.v = f.d
		}
	}
	return l
}

// withDefaults fills a zero rate or burst from d, each on its own; a
// negative rate is off.
func (r Rate) withDefaults(d Rate) Rate {
	if r.PerSecond == 0 {
		r.PerSecond = d.PerSecond
	}
	if r.Burst <= 0 {
		r.Burst = d.Burst
	}
	return r
}

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

// errRateLimited is a 429 that says which limit, with Retry-After set
// on w.
func errRateLimited(w http.ResponseWriter, which string, retry time.Duration) error {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(max(retry, time.Second).Seconds()))))
	return errdefs.ResourceExhausted("rate_limited", "too many requests from this %s; retry after %s", which, retry.Round(time.Millisecond))
}

// clientAddr is the address r came from (no port): the peer, or behind
// a trusted proxy the client it forwarded (clientaddr.Resolver).
func (a *API) clientAddr(r *http.Request) string {
	return a.clients.Of(r)
}

// takeAddress spends a token of the client address's bucket (an IPv6
// client's /64's, clientaddr.Key). Only calls without a credential, or
// whose credential was refused, draw from it: an authenticated call
// draws from its credential's bucket alone (takeCredential), so callers
// behind one proxy do not throttle each other, and guessing keys from
// one address is still bounded.
func (a *API) takeAddress(w http.ResponseWriter, r *http.Request) error {
	if ok, retry := a.perClient.take(clientaddr.Key(a.clientAddr(r))); !ok {
		return errRateLimited(w, "address", retry)
	}
	return nil
}

// takeCredential spends a token of the credential's bucket. Sessions share
// their user's bucket: signing in again does not buy more requests.
func (a *API) takeCredential(w http.ResponseWriter, id auth.Identity) error {
	bucket := id.Credential()
	if id.SessionID != "" {
		bucket = id.Principal()
	}
	if ok, retry := a.perKey.take(bucket); !ok {
		return errRateLimited(w, "credential", retry)
	}
	return nil
}

// takeToken spends a token of a preview token's own bucket, keyed by a
// hash of it: a shared link or a busy embed draws neither from its
// maker's bucket, which stays the maker's own API calls', nor from the
// address's.
func (a *API) takeToken(w http.ResponseWriter, tok string) error {
	sum := sha256.Sum256([]byte(tok))
	if ok, retry := a.perKey.take("preview:" + hex.EncodeToString(sum[:])); !ok {
		return errRateLimited(w, "preview token", retry)
	}
	return nil
}

// caps counts concurrent sessions of a kind (exec streams, terminals) per
// runtime and per user.
type caps struct {
	kind       string // exec_streams, terminals
	perRuntime int
	perUser    int
	mu         sync.Mutex
	byRuntime  map[string]int
	byUser     map[string]int
}

func newCaps(kind string, perRuntime, perUser int) *caps {
	return &caps{kind: kind, perRuntime: perRuntime, perUser: perUser, byRuntime: map[string]int{}, byUser: map[string]int{}}
}

// acquire takes one session for runtime and user, or answers 429 with a
// code naming the cap that is full (too_many_exec_streams_per_runtime,
// …). release gives it back; call it once.
func (c *caps) acquire(runtime, user string) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.perRuntime >= 0 && c.byRuntime[runtime] >= c.perRuntime {
		return nil, errdefs.ResourceExhausted("too_many_"+c.kind+"_per_runtime", "this runtime has %d open %s, its most; close one first", c.byRuntime[runtime], c.noun())
	}
	if c.perUser >= 0 && c.byUser[user] >= c.perUser {
		return nil, errdefs.ResourceExhausted("too_many_"+c.kind+"_per_user", "you have %d open %s, the most one user may; close one first", c.byUser[user], c.noun())
	}
	c.byRuntime[runtime]++
	c.byUser[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.byRuntime[runtime]--; c.byRuntime[runtime] <= 0 {
				delete(c.byRuntime, runtime)
			}
			if c.byUser[user]--; c.byUser[user] <= 0 {
				delete(c.byUser, user)
			}
		})
	}, nil
}

func (c *caps) noun() string {
	if c.kind == "exec_streams" {
		return "exec streams"
	}
	return c.kind
}
