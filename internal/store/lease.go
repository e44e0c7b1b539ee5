package store

import (
	"context"
	"time"
)

// ---------------------------------------------------------------------------
// Leases
//
// Vocabulary:
//
//   - Lease: a named right to run one background loop (the settler, the
//     lifecycle rounds, …) on one replica at a time. It is a row with a
//     holder (a replica's id) and an expiry; a holder keeps it by renewing
//     it before it expires, and any replica may take it once it has.
//   - Token: the lease's fencing token. It grows by one each time the
//     lease changes holder (a release counts: the next acquisition is a
//     new holding), never on a renewal, so two holdings of one lease never
//     share a token, and a later holding always has a larger one.
// ---------------------------------------------------------------------------

// Lease is one lease's row.
type Lease struct {
	Name   string
	Holder string // "" when released
	Token  int64
	// AcquiredAt is when the holder took the lease; RenewedAt when it last
	// renewed it (AcquiredAt at first); ExpiresAt when it lapses unless
	// renewed.
	AcquiredAt time.Time
	RenewedAt  time.Time
	ExpiresAt  time.Time
}

// LeaseQueries keep leases. Times are the caller's clock: every replica
// must keep time well within a lease's TTL of the others.
type LeaseQueries interface {
	// AcquireLease takes or renews the lease name for holder at at, until
	// at+ttl. It succeeds when the lease is free (never taken, released, or
	// expired at at) or already held by holder: it returns the stored lease
	// and true. A lease that changes holder gets the next token and
	// AcquiredAt at; a renewal keeps both. When another holder's lease has
	// not expired at at, nothing changes and it returns that lease and
	// false. A ttl that is not positive, or an empty name or holder, is
	// ErrInvalidArgument.
	AcquireLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (Lease, bool, error)
	// ReleaseLease frees the lease name if holder holds it with token, so
	// another replica may take it at once; it reports whether it did (a
	// lease another holder has since taken is left alone).
	ReleaseLease(ctx context.Context, name, holder string, token int64) (bool, error)
	// ListLeases lists every lease ever taken, by name.
	ListLeases(ctx context.Context) ([]Lease, error)
}
