package postgres

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Replicated reports that replicas share this store: the API keeps its
// limits' live state in it (store.Replicated).
func (s *Store) Replicated() bool { return true }

// TakeToken draws one token from the bucket key at at, in one statement.
func (q *queries) TakeToken(ctx context.Context, key string, rate store.BucketRate, at time.Time) (bool, time.Duration, error) {
	if err := dialect.CheckBucket(key, rate); err != nil {
		return false, 0, err
	}
	r, err := q.q.TakeToken(ctx, pgdb.TakeTokenParams{Key: key, Burst: float64(rate.Burst), At: stamp(at), Rate: rate.PerSecond})
	if err != nil {
		return false, 0, classify("take token", dialect.Bucket, err)
	}
	if r.Granted {
		return true, 0, nil
	}
	return false, dialect.BucketWait(r.Tokens, rate), nil
}

// SweepBuckets forgets the buckets last drawn from before before.
func (q *queries) SweepBuckets(ctx context.Context, before time.Time) (int64, error) {
	n, err := q.q.SweepBuckets(ctx, stamp(before))
	return n, classify("sweep buckets", dialect.Bucket, err)
}

// TakeHold takes h against every cap of caps, or none, in one transaction
// that holds each cap's advisory lock (taken in one order by every taker)
// while it counts and records: takers of one cap on any replica go one at
// a time, and each counts what the one before it committed.
func (q *queries) TakeHold(ctx context.Context, h store.Hold, caps []store.Cap, at time.Time) (taken bool, held []int, err error) {
	sorted, err := dialect.CheckHold(h, caps, at)
	if err != nil {
		return false, nil, err
	}
	at = stamp(at)
	err = q.atomic(ctx, func(q *queries) error {
		counts := make([]int, len(sorted))
		for i, c := range sorted {
			if err := q.q.LockCap(ctx, pgdb.LockCapParams{Kind: c.Kind, Key: c.Key}); err != nil {
				return classify("lock cap", dialect.Hold, err)
			}
			n, err := q.q.CountHolds(ctx, pgdb.CountHoldsParams{Kind: c.Kind, Key: c.Key, At: at})
			if err != nil {
				return classify("count holds", dialect.Hold, err)
			}
			counts[i] = int(n)
		}
		held, taken = dialect.HeldCounts(caps, sorted, counts)
		if !taken {
			return nil
		}
		for _, c := range sorted {
			err := q.q.InsertHold(ctx, pgdb.InsertHoldParams{ID: h.ID, Kind: c.Kind, Key: c.Key, Holder: h.Holder, ExpiresAt: stamp(h.ExpiresAt)})
			if err != nil {
				return classify("take hold", dialect.Hold, err)
			}
		}
		return nil
	})
	if err != nil {
		return false, nil, err
	}
	return taken, held, nil
}

// ReleaseHold forgets the hold id.
func (q *queries) ReleaseHold(ctx context.Context, id string) error {
	if err := dialect.Required(dialect.Hold, "id", id); err != nil {
		return err
	}
	return classify("release hold", dialect.Hold, q.q.ReleaseHold(ctx, id))
}

// RenewHolds moves the expiry of holder's live holds among ids.
func (q *queries) RenewHolds(ctx context.Context, holder string, ids []string, at, expires time.Time) (int64, error) {
	if err := dialect.Required(dialect.Hold, "holder", holder); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := q.q.RenewHolds(ctx, pgdb.RenewHoldsParams{ExpiresAt: stamp(expires), Holder: holder, At: stamp(at), Ids: ids})
	return n, classify("renew holds", dialect.Hold, err)
}

// SweepHolds forgets the holds lapsed at at.
func (q *queries) SweepHolds(ctx context.Context, at time.Time) (int64, error) {
	n, err := q.q.SweepHolds(ctx, stamp(at))
	return n, classify("sweep holds", dialect.Hold, err)
}
