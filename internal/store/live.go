package store

import (
	"context"
	"time"
)

// ---------------------------------------------------------------------------
// Live state shared by replicas
//
// Replicas on one database share the API's limits through these tables, so
// a limit of N holds across the fleet, not N per replica.
//
// Vocabulary:
//
//   - Bucket: a token bucket by key (a credential, a client address). It
//     refills at a rate, up to its burst, with the time elapsed since it
//     was last drawn from; each request takes one token or is refused with
//     the wait until there is one.
//   - Cap: a limit on concurrent holds: at most Max live holds of one kind
//     (exec streams per runtime, terminals per user, …) and key (the
//     runtime's id, the user's).
//   - Hold: one live session (an exec stream, a terminal) counted against
//     one or more caps. A hold has a holder (the replica that serves the
//     session) and an expiry its holder renews while the session lives;
//     a dead replica's holds lapse at their expiry and stop counting.
//
// Times are the caller's clock, as for leases: every replica must keep time
// well within a hold's TTL of the others. A bucket never refills backwards:
// a draw stamped before the last one refills nothing.
// ---------------------------------------------------------------------------

// BucketRate is a token bucket's refill rate (tokens a second, positive)
// and capacity (at least 1).
type BucketRate struct {
	PerSecond float64
	Burst     int
}

// Cap is one limit a hold counts against: at most Max live holds of Kind
// and Key.
type Cap struct {
	Kind string
	Key  string
	Max  int
}

// Hold is one live session counted against caps.
type Hold struct {
	ID     string // unique per hold
	Holder string // the replica that serves the session
	// ExpiresAt is when the hold stops counting unless renewed.
	ExpiresAt time.Time
}

// LiveQueries keep the limits' live state.
type LiveQueries interface {
	// TakeToken draws one token from the bucket key at at, in one atomic
	// step: it refills the bucket by rate for the time since its last
	// draw (a bucket never drawn from is full), then takes one token if
	// there is a whole one. It returns whether it took one and, when not,
	// how long until the bucket holds one. A rate that is not positive, a
	// burst under 1 or an empty key is ErrInvalidArgument.
	TakeToken(ctx context.Context, key string, rate BucketRate, at time.Time) (taken bool, wait time.Duration, err error)
	// SweepBuckets forgets the buckets last drawn from before before (a
	// bucket forgotten is full again) and returns how many.
	SweepBuckets(ctx context.Context, before time.Time) (int64, error)

	// TakeHold takes hold h against every cap of caps at at, atomically
	// and serialized per cap: it counts each cap's holds live at at
	// (expiring after it) and, if every count is under its cap's Max,
	// records the hold against all of them; else it records nothing. It
	// returns whether it took the hold and each cap's count before it.
	// An empty id, holder, kind or key, a negative Max, no caps, the same
	// cap twice or an expiry not after at is ErrInvalidArgument.
	TakeHold(ctx context.Context, h Hold, caps []Cap, at time.Time) (taken bool, held []int, err error)
	// ReleaseHold forgets the hold id; a hold already gone is no error.
	ReleaseHold(ctx context.Context, id string) error
	// RenewHolds moves the expiry of those of ids that holder holds and
	// that are live at at to expires, and returns how many it renewed (a
	// hold counts once per cap). A hold that has lapsed stays lapsed: its
	// place may have been taken.
	RenewHolds(ctx context.Context, holder string, ids []string, at, expires time.Time) (int64, error)
	// SweepHolds forgets the holds that have lapsed at at (a dead
	// replica's) and returns how many (a hold counts once per cap).
	SweepHolds(ctx context.Context, at time.Time) (int64, error)
}

// Replicated reports whether st is a store that replicas share as a matter
// of course (PostgreSQL), so live state belongs in it; a store says so by
// implementing Replicated() bool. An embedded store (SQLite) serves one
// process, which keeps its live state in memory.
func Replicated(st Store) bool {
	r, ok := st.(interface{ Replicated() bool })
	return ok && r.Replicated()
}
