// Package lease runs each background loop on one replica at a time. An
// Elector is one replica's side: for each named lease it runs (Run), it
// takes the lease in the store when it is free, runs the loop while it
// holds it, renews it every quarter of its TTL, and stops the loop the moment
// the lease is lost or could not be renewed in time; then it tries again.
//
// Vocabulary (see store.LeaseQueries): a lease has a holder (a replica's
// id), an expiry its holder renews, and a fencing token that grows at each
// change of holder. A replica that dies without releasing its leases
// keeps them only until they expire: another takes each within its TTL.
//
// A loop run under a lease must still write only through versioned
// verbs: the lease bounds who runs, the rows' versions (a sandbox's
// version, its billing version) make a write that races an old holder's
// fail instead of applying twice.
package lease

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// DefaultTTL is a lease's time to live when the Elector's config names
// none: a dead holder's loops stop for at most this long.
const DefaultTTL = 15 * time.Second

// Store is what an Elector keeps its leases in.
type Store interface {
	AcquireLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (store.Lease, bool, error)
	ReleaseLease(ctx context.Context, name, holder string, token int64) (bool, error)
}

// Config configures an Elector.
type Config struct {
	Store Store
	// Replica is this replica's id, the holder of the leases it takes;
	// every replica needs its own.
	Replica string
	// TTL is how long a lease lasts without a renewal; 0 means DefaultTTL.
	TTL time.Duration
	// Now is the clock leases are stamped with; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Held is a lease this replica holds.
type Held struct {
	Name      string
	Token     int64
	ExpiresAt time.Time
}

// Elector holds one replica's leases.
type Elector struct {
	cfg Config

	mu    sync.Mutex
	names map[string]bool // the leases it runs
	held  map[string]Held // those it holds
}

// New returns the elector of cfg.Replica.
func New(cfg Config) *Elector {
	cfg.TTL = cmp.Or(cfg.TTL, DefaultTTL)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Elector{cfg: cfg, names: map[string]bool{}, held: map[string]Held{}}
}

// Replica is this replica's id.
func (e *Elector) Replica() string { return e.cfg.Replica }

// TTL is how long its leases last without a renewal.
func (e *Elector) TTL() time.Duration { return e.cfg.TTL }

// Names are the leases it runs, held or not, by name.
func (e *Elector) Names() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.names))
	for n := range e.names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Held are the leases it holds now, by name.
func (e *Elector) Held() []Held {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Held, 0, len(e.held))
	for _, h := range e.held {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Held) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Holds reports whether it holds the lease name now.
func (e *Elector) Holds(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.held[name]
	return ok
}

// Run runs fn while this replica holds the lease name, until ctx ends:
// it takes the lease when it is free, runs fn with a context that is
// cancelled the moment the lease is lost or was not renewed in time, waits
// for fn to return, and tries again. When ctx ends it stops fn and
// releases the lease, so another replica takes it at its next try, within
// a quarter of the TTL, rather than when it would expire. A fn that
// returns by itself while the lease is held ends Run, releasing the lease.
func (e *Elector) Run(ctx context.Context, name string, fn func(ctx context.Context)) {
	e.mu.Lock()
	e.names[name] = true
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.names, name)
		e.mu.Unlock()
	}()
	for ctx.Err() == nil {
		l, ok, err := e.cfg.Store.AcquireLease(ctx, name, e.cfg.Replica, e.cfg.Now(), e.cfg.TTL)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				e.cfg.Logger.WarnContext(ctx, "cannot take a lease; retrying", "lease", name, "err", err)
			}
			e.sleep(ctx, e.cfg.Now().Add(e.renewEvery()))
		case !ok:
			// Wake when the holder's lease lapses, or sooner: it may be
			// released.
			e.sleep(ctx, minTime(l.ExpiresAt, e.cfg.Now().Add(e.renewEvery())))
		default:
			if ended := e.hold(ctx, l, fn); ended {
				return
			}
		}
	}
}

// renewEvery is how often a holder renews its lease: every quarter of
// the TTL. grace is how long before the lease expires its loop is stopped
// when no renewal succeeded: a quarter of the TTL too, left to the loop to
// wind down before another replica may take over. So a holder tries
// twice to renew before it gives up.
func (e *Elector) renewEvery() time.Duration { return e.cfg.TTL / 4 }

func (e *Elector) grace() time.Duration { return e.cfg.TTL / 4 }

// hold runs fn while the lease l is renewed, and reports whether Run is
// over (ctx ended, or fn returned by itself).
func (e *Elector) hold(ctx context.Context, l store.Lease, fn func(ctx context.Context)) (ended bool) {
	log := e.cfg.Logger.With("lease", l.Name, "token", l.Token)
	log.InfoContext(ctx, "lease taken; running its loop", "expires_at", l.ExpiresAt)
	e.setHeld(Held{Name: l.Name, Token: l.Token, ExpiresAt: l.ExpiresAt})
	defer e.clearHeld(l.Name)

	fctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(fctx)
	}()
	lost := e.renew(ctx, l, done, log)
	stop()
	<-done
	if lost {
		return false
	}
	// ctx ended or fn returned: give the lease up for another replica.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.renewEvery())
	defer cancel()
	if _, err := e.cfg.Store.ReleaseLease(rctx, l.Name, e.cfg.Replica, l.Token); err != nil {
		log.WarnContext(rctx, "cannot release a lease; it lapses by itself", "err", err)
	}
	return true
}

// renew renews l until ctx ends or fn is done (false), or the lease is
// lost (true): another replica holds it, its token changed, or no renewal
// succeeded before its deadline, a grace before it expires.
func (e *Elector) renew(ctx context.Context, l store.Lease, done <-chan struct{}, log *slog.Logger) (lost bool) {
	next := e.cfg.Now().Add(e.renewEvery())
	for {
		deadline := l.ExpiresAt.Add(-e.grace())
		if !e.wait(ctx, done, minTime(next, deadline)) {
			return false
		}
		now := e.cfg.Now()
		if !now.Before(deadline) {
			log.WarnContext(ctx, "lease not renewed in time; stopping its loop", "expires_at", l.ExpiresAt)
			return true
		}
		next = now.Add(e.renewEvery())
		rctx, cancel := context.WithTimeout(ctx, deadline.Sub(now))
		r, ok, err := e.cfg.Store.AcquireLease(rctx, l.Name, e.cfg.Replica, now, e.cfg.TTL)
		cancel()
		switch {
		case ctx.Err() != nil:
			return false
		case err != nil:
			log.WarnContext(ctx, "cannot renew a lease", "err", err, "expires_at", l.ExpiresAt)
		case !ok || r.Token != l.Token:
			log.WarnContext(ctx, "lease lost; stopping its loop", "holder", r.Holder, "holder_token", r.Token)
			return true
		default:
			l = r
			e.setHeld(Held{Name: l.Name, Token: l.Token, ExpiresAt: l.ExpiresAt})
		}
	}
}

// wait waits until at, and reports true then; false when ctx ends or done
// closes first.
func (e *Elector) wait(ctx context.Context, done <-chan struct{}, at time.Time) bool {
	t := time.NewTimer(max(at.Sub(e.cfg.Now()), 0))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-done:
		return false
	case <-t.C:
		return true
	}
}

// sleep waits until at or until ctx ends.
func (e *Elector) sleep(ctx context.Context, at time.Time) { e.wait(ctx, nil, at) }

func (e *Elector) setHeld(h Held) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.held[h.Name] = h
}

func (e *Elector) clearHeld(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.held, name)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
