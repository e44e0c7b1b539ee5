package sqlite

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
)

// The limits' live state (migration 0013). One SQLite database serves one
// process, whose API keeps these in memory; the store keeps them too, so
// the contract is one for both dialects.

// takeToken refills the bucket by the time since its last draw (never
// backwards), up to the burst, and takes a whole token if there is one, in
// one statement. A bucket never drawn from starts full, less this draw.
// Parameters: key, burst, at (µs), rate.
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
	return q.execRows(ctx, "sweep buckets", dialect.Bucket, "DELETE FROM rate_buckets WHERE drawn_at < ?", micros(before))
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
			err := q.w.QueryRowContext(ctx, "SELECT COUNT(*) FROM live_holds WHERE kind = ? AND key = ? AND expires_at > ?",
				c.Kind, c.Key, micros(at)).Scan(&counts[i])
			if err != nil {
				return classify("count holds", dialect.Hold, err)
			}
		}
		held, taken = dialect.HeldCounts(caps, sorted, counts)
		if !taken {
			return nil
		}
		for _, c := range sorted {
			_, err := q.w.ExecContext(ctx, "INSERT INTO live_holds (id, kind, key, holder, expires_at) VALUES (?, ?, ?, ?, ?)",
				h.ID, c.Kind, c.Key, h.Holder, micros(h.ExpiresAt))
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
	_, err := q.execRows(ctx, "release hold", dialect.Hold, "DELETE FROM live_holds WHERE id = ?", id)
	return err
}

// RenewHolds moves the expiry of holder's live holds among ids.
func (q *queries) RenewHolds(ctx context.Context, holder string, ids []string, at, expires time.Time) (int64, error) {
	if err := required(dialect.Hold, "holder", holder); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	args := []any{micros(expires), holder, micros(at)}
	for _, id := range ids {
		args = append(args, id)
	}
	return q.execRows(ctx, "renew holds", dialect.Hold,
		"UPDATE live_holds SET expires_at = ? WHERE holder = ? AND expires_at > ? AND id IN ("+placeholders(len(ids))+")", args...)
}

// SweepHolds forgets the holds lapsed at at.
func (q *queries) SweepHolds(ctx context.Context, at time.Time) (int64, error) {
	return q.execRows(ctx, "sweep holds", dialect.Hold, "DELETE FROM live_holds WHERE expires_at <= ?", micros(at))
}

// execRows runs a write and returns the rows it changed.
func (q *queries) execRows(ctx context.Context, op string, res resource, query string, args ...any) (int64, error) {
	r, err := q.w.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, classify(op, res, err)
	}
	n, err := r.RowsAffected()
	return n, classify(op, res, err)
}
