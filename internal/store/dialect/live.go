package dialect

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// The records of the limits' live state (store.LiveQueries).
const (
	Bucket Resource = "rate_bucket"
	Hold   Resource = "live_hold"
)

// CheckBucket checks a draw from a token bucket.
func CheckBucket(key string, rate store.BucketRate) error {
	if err := Required(Bucket, "key", key); err != nil {
		return err
	}
	if !(rate.PerSecond > 0) || math.IsInf(rate.PerSecond, 0) || rate.Burst < 1 {
		return errdefs.InvalidArgument("invalid_rate_bucket", "a bucket needs a positive rate and a burst of at least 1, not %v a second and %d", rate.PerSecond, rate.Burst)
	}
	return nil
}

// BucketWait is how long until a bucket left with tokens (under one)
// holds a whole one, at rate, rounded up to the store's microsecond.
func BucketWait(tokens float64, rate store.BucketRate) time.Duration {
	return time.Duration(math.Ceil((1-tokens)/rate.PerSecond*1e6)) * time.Microsecond
}

// CheckHold checks a hold and its caps, and returns the caps in the order
// a store locks them (kind, then key): every taker locks in one order, so
// two never wait on each other.
func CheckHold(h store.Hold, caps []store.Cap, at time.Time) ([]store.Cap, error) {
	if err := Required(Hold, "id", h.ID, "holder", h.Holder); err != nil {
		return nil, err
	}
	if !h.ExpiresAt.After(at) {
		return nil, errdefs.InvalidArgument("invalid_live_hold", "a hold must expire after it is taken")
	}
	if len(caps) == 0 {
		return nil, errdefs.InvalidArgument("invalid_live_hold", "a hold needs a cap to count against")
	}
	sorted := slices.Clone(caps)
	slices.SortFunc(sorted, func(a, b store.Cap) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Key, b.Key)) })
	for i, c := range sorted {
		if err := Required(Hold, "kind", c.Kind, "key", c.Key); err != nil {
			return nil, err
		}
		if c.Max < 0 {
			return nil, errdefs.InvalidArgument("invalid_live_hold", "cap %s/%s has a negative most, %d", c.Kind, c.Key, c.Max)
		}
		if i > 0 && sorted[i-1].Kind == c.Kind && sorted[i-1].Key == c.Key {
			return nil, errdefs.InvalidArgument("invalid_live_hold", "cap %s/%s is named twice", c.Kind, c.Key)
		}
	}
	return sorted, nil
}

// HeldCounts orders counts of sorted (CheckHold's order) as caps are,
// and reports whether every count is under its cap.
func HeldCounts(caps, sorted []store.Cap, counts []int) (held []int, room bool) {
	held = make([]int, len(caps))
	room = true
	for i, c := range caps {
		j := slices.IndexFunc(sorted, func(s store.Cap) bool { return s.Kind == c.Kind && s.Key == c.Key })
		held[i] = counts[j]
		room = room && counts[j] < c.Max
	}
	return held, room
}
