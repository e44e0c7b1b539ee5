package api

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/sshgw"
	"github.com/paddockhq/paddock/internal/store"
)

// DefaultHoldTTL is how long a session's hold counts against its caps
// without a renewal: a dead replica's sessions stop counting within it.
const DefaultHoldTTL = 15 * time.Second

// storeTimeout bounds one statement of the limits' state: a store that
// does not answer in time lets the request through (Take) or refuses
// the session (Hold).
const storeTimeout = 5 * time.Second

// LiveStore is what SharedLimits keep the limits' state in.
type LiveStore interface {
	TakeToken(ctx context.Context, key string, rate store.BucketRate, at time.Time) (bool, time.Duration, error)
	SweepBuckets(ctx context.Context, before time.Time) (int64, error)
	TakeHold(ctx context.Context, h store.Hold, caps []store.Cap, at time.Time) (bool, []int, error)
	ReleaseHold(ctx context.Context, id string) error
	RenewHolds(ctx context.Context, holder string, ids []string, at, expires time.Time) (int64, error)
	SweepHolds(ctx context.Context, at time.Time) (int64, error)
}

// SharedLimitsConfig configures SharedLimits.
type SharedLimitsConfig struct {
	Store LiveStore
	// Replica is this replica's id: the holder of its sessions' holds.
	Replica string
	// TTL is how long a hold lasts without a renewal; 0 means
	// DefaultHoldTTL. Run renews this replica's every third of it.
	TTL time.Duration
	// Now is the clock of the buckets and holds; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// SharedLimits keep the limits' live state in a store the replicas
// share, so that a limit holds across them:
//
//   - a request draws its token with one statement (store.TakeToken),
//     which refills and takes atomically: a bucket's burst is spent
//     across the replicas, and either answers 429 once it is;
//   - a session (an exec stream, a terminal) is a hold taken against its
//     caps atomically (store.TakeHold) and released when it ends. Run
//     renews this replica's holds while it lives, so a replica that
//     dies without releasing them holds their places only until they
//     lapse, one TTL at most.
type SharedLimits struct {
	cfg SharedLimitsConfig
	// fill is the longest time, in nanoseconds, a bucket drawn from takes
	// to fill again: a bucket not drawn from for longer is full, and the
	// sweep forgets it.
	fill atomic.Int64
	// failing is when a store failure was last logged (unix ns).
	failing atomic.Int64

	mu   sync.Mutex
	held map[string]bool // the ids of the holds of this replica's sessions
}

var (
	_ LimitState        = (*SharedLimits)(nil)
	_ sshgw.UserCounter = (*SharedLimits)(nil)
)

// NewSharedLimits returns the limits' state of cfg.Replica in cfg.Store.
func NewSharedLimits(cfg SharedLimitsConfig) *SharedLimits {
	cfg.TTL = cmp.Or(cfg.TTL, DefaultHoldTTL)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &SharedLimits{cfg: cfg, held: map[string]bool{}}
}

// Take spends one token of key's bucket in the store. A store that fails
// lets the request through: the limit protects the server, and a request
// that needs the store fails on its own.
func (s *SharedLimits) Take(ctx context.Context, key string, r Rate) (bool, time.Duration) {
	if fill := int64(min(float64(max(r.Burst, 1))/r.PerSecond*float64(time.Second), math.MaxInt64/2)); fill > s.fill.Load() {
		s.fill.Store(fill)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	ok, wait, err := s.cfg.Store.TakeToken(ctx, key, store.BucketRate{PerSecond: r.PerSecond, Burst: max(r.Burst, 1)}, s.cfg.Now())
	if err != nil {
		s.logFailure("a rate limit's bucket could not be drawn from; the request goes through", err)
		return true, 0
	}
	return ok, wait
}

// Hold takes a hold against caps in the store, or answers a *CapFull.
func (s *SharedLimits) Hold(ctx context.Context, caps []Cap) (func(), error) {
	sc := make([]store.Cap, len(caps))
	for i, c := range caps {
		sc[i] = store.Cap(c)
	}
	now := s.cfg.Now()
	h := store.Hold{ID: uuid.NewString(), Holder: s.cfg.Replica, ExpiresAt: now.Add(s.cfg.TTL)}
	// The hold is renewed from the moment it may be taken: a renewal
	// before the store records it renews nothing.
	s.mu.Lock()
	s.held[h.ID] = true
	s.mu.Unlock()
	tctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	taken, held, err := s.cfg.Store.TakeHold(tctx, h, sc, now)
	if err != nil || !taken {
		s.forget(h.ID)
	}
	if err != nil {
		return nil, errdefs.Unavailable("limits_unavailable", "cannot count the open sessions now; retry").WithCause(err)
	}
	if !taken {
		return nil, fullOf(caps, held)
	}
	var once sync.Once
	return func() { once.Do(func() { s.release(ctx, h.ID) }) }, nil
}

// TakeUser takes one of userID's max places among SSH connections, kind
// ssh_connections_per_user: the SSH gateway's count where replicas share
// it (sshgw.Config.Users).
func (s *SharedLimits) TakeUser(ctx context.Context, userID string, max int) (func(), bool, error) {
	release, err := s.Hold(ctx, []Cap{{Kind: "ssh_connections_per_user", Key: userID, Max: max}})
	var full *CapFull
	if errors.As(err, &full) {
		return nil, false, nil
	}
	return release, err == nil, err
}

// fullOf is the refusal of a hold the store did not take: the first of
// caps whose count held is at its most.
func fullOf(caps []Cap, held []int) *CapFull {
	for i, c := range caps {
		if held[i] >= c.Max {
			return &CapFull{Cap: c, Held: held[i]}
		}
	}
	return &CapFull{Cap: caps[0], Held: held[0]}
}

// release forgets the hold id here and in the store. A hold the store
// could not forget lapses at its expiry: nothing renews it any more.
func (s *SharedLimits) release(ctx context.Context, id string) {
	s.forget(id)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := s.cfg.Store.ReleaseHold(ctx, id); err != nil {
		s.cfg.Logger.WarnContext(ctx, "a session's hold could not be released; it lapses", "hold", id, "ttl", s.cfg.TTL, "error", err)
	}
}

func (s *SharedLimits) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, id)
}

// Run renews this replica's holds, and forgets lapsed holds and full
// buckets, every third of the TTL until ctx ends.
func (s *SharedLimits) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Renew(ctx); err != nil && ctx.Err() == nil {
				s.logFailure("the limits' live state could not be renewed", err)
			}
		}
	}
}

// Renew renews this replica's holds for a TTL from now, then forgets
// every lapsed hold (a dead replica's) and every bucket full again.
func (s *SharedLimits) Renew(ctx context.Context) error {
	s.mu.Lock()
	ids := make([]string, 0, len(s.held))
	for id := range s.held {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	now := s.cfg.Now()
	if _, err := s.cfg.Store.RenewHolds(ctx, s.cfg.Replica, ids, now, now.Add(s.cfg.TTL)); err != nil {
		return err
	}
	if _, err := s.cfg.Store.SweepHolds(ctx, now); err != nil {
		return err
	}
	if fill := s.fill.Load(); fill > 0 {
		if _, err := s.cfg.Store.SweepBuckets(ctx, now.Add(-time.Duration(fill)-time.Second)); err != nil {
			return err
		}
	}
	return nil
}

// logFailure logs a failure of the store, at most once a minute: a store
// that is down would otherwise log a line a request.
func (s *SharedLimits) logFailure(msg string, err error) {
	now := time.Now().UnixNano()
	last := s.failing.Load()
	if now-last < int64(time.Minute) || !s.failing.CompareAndSwap(last, now) {
		return
	}
	s.cfg.Logger.Warn(msg, "error", err)
}
