package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// The limits' live state (migration 0013). One SQLite database serves one
// process, whose API keeps these in memory; the store keeps them too, so
// the contract is one for both dialects.

// takeToken refills the bucket by the time since its last draw (never
// backwards), up to the burst, and takes a whole token if there is one, in
// one statement. A bucket never drawn from starts full, less this draw.
// Parameters: key, burst, at (µs), rate. It is the one statement of this
// file not in queries/live.sql: sqlc's SQLite parser leaves parameters
// inside an upsert's DO UPDATE clause unbound.
const takeToken = `INSERT INTO rate_buckets (key, tokens, granted, drawn_at) VALUES (?1, ?2 - 1, 1, ?3)
	ON CONFLICT (key) DO UPDATE SET
		tokens = CASE WHEN ` + refilled + ` >= 1 THEN ` + refilled + ` - 1 ELSE ` + refilled + ` END,
		granted = ` + refilled + ` >= 1,
		drawn_at = MAX(rate_buckets.drawn_at, excluded.drawn_at)
	RETURNING tokens, granted`

// refilled is a bucket's tokens after refilling, in takeToken.
const refilled = `MIN(?2, rate_buckets.tokens + ?4 * MAX(0, excluded.drawn_at - rate_buckets.drawn_at) / 1e6)`

// TakeToken draws one token from the bucket key at at.
func (q *queries) TakeToken(ctx context.Context, key string, rate store.BucketRate, at time.Time) (bool, time.Duration, error) {
	if err := dialect.CheckBucket(key, rate); err != nil {
		return false, 0, err
	}
	var tokens float64
	var granted bool
	err := q.w.QueryRowContext(ctx, takeToken, key, float64(rate.Burst), micros(at), rate.PerSecond).Scan(&tokens, &granted)
	if err != nil {
		return false, 0, classify("take token", dialect.Bucket, err)
	}
	if granted {
		return true, 0, nil
	}
	return false, dialect.BucketWait(tokens, rate), nil
}

// SweepBuckets forgets the buckets last drawn from before before.
func (q *queries) SweepBuckets(ctx context.Context, before time.Time) (int64, error) {
	n, err := q.wq.SweepBuckets(ctx, micros(before))
	return n, classify("sweep buckets", dialect.Bucket, err)
}

// TakeHold takes h against every cap of caps, or none, in one write
// transaction (SQLite's one writer serializes the takers).
func (q *queries) TakeHold(ctx context.Context, h store.Hold, caps []store.Cap, at time.Time) (taken bool, held []int, err error) {
	sorted, err := dialect.CheckHold(h, caps, at)
	if err != nil {
		return false, nil, err
	}
	err = q.atomic(ctx, func(q *queries) error {
		counts := make([]int, len(sorted))
		for i, c := range sorted {
			n, err := q.wq.CountHolds(ctx, litedb.CountHoldsParams{Kind: c.Kind, Key: c.Key, At: micros(at)})
			counts[i] = int(n)
			if err != nil {
				return classify("count holds", dialect.Hold, err)
			}
		}
		held, taken = dialect.HeldCounts(caps, sorted, counts)
		if !taken {
			return nil
		}
		for _, c := range sorted {
			err := q.wq.InsertHold(ctx, litedb.InsertHoldParams{ID: h.ID, Kind: c.Kind, Key: c.Key, Holder: h.Holder,
				ExpiresAt: micros(h.ExpiresAt)})
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
	if err := required(dialect.Hold, "id", id); err != nil {
		return err
	}
	return classify("release hold", dialect.Hold, q.wq.ReleaseHold(ctx, id))
}

// RenewHolds moves the expiry of holder's live holds among ids.
func (q *queries) RenewHolds(ctx context.Context, holder string, ids []string, at, expires time.Time) (int64, error) {
	if err := required(dialect.Hold, "holder", holder); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return 0, errEncode(dialect.Hold, "ids", err)
	}
	n, err := q.wq.RenewHolds(ctx, litedb.RenewHoldsParams{ExpiresAt: micros(expires), Holder: holder, At: micros(at), Ids: string(list)})
	return n, classify("renew holds", dialect.Hold, err)
}

// SweepHolds forgets the holds lapsed at at.
func (q *queries) SweepHolds(ctx context.Context, at time.Time) (int64, error) {
	n, err := q.wq.SweepHolds(ctx, micros(at))
	return n, classify("sweep holds", dialect.Hold, err)
}
