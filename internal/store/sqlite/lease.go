package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Leases (migration 0012).

const resLease resource = "lease"

func leaseFromRow(r litedb.Lease) store.Lease {
	return store.Lease{Name: r.Name, Holder: r.Holder, Token: r.Token,
		AcquiredAt: fromMicro(r.AcquiredAt), RenewedAt: fromMicro(r.RenewedAt), ExpiresAt: fromMicro(r.ExpiresAt)}
}

// AcquireLease takes or renews the lease name for holder until at+ttl.
func (q *queries) AcquireLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (store.Lease, bool, error) {
	if err := required(resLease, "name", name, "holder", holder); err != nil {
		return store.Lease{}, false, err
	}
	if ttl <= 0 {
		return store.Lease{}, false, errdefs.InvalidArgument("invalid_lease", "a lease's ttl must be positive, not %s", ttl)
	}
	r, err := q.wq.AcquireLease(ctx, litedb.AcquireLeaseParams{
		Name: name, Holder: holder, At: micros(at), ExpiresAt: micros(at.Add(ttl)),
	})
	if err == nil {
		return leaseFromRow(r), true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.Lease{}, false, classify("acquire lease", resLease, err)
	}
	r, err = q.wq.GetLease(ctx, name)
	if err != nil {
		return store.Lease{}, false, classify("read lease", resLease, err)
	}
	return leaseFromRow(r), false, nil
}

// ReleaseLease frees the lease name if holder holds it with token.
func (q *queries) ReleaseLease(ctx context.Context, name, holder string, token int64) (bool, error) {
	if err := required(resLease, "name", name, "holder", holder); err != nil {
		return false, err
	}
	n, err := q.wq.ReleaseLease(ctx, litedb.ReleaseLeaseParams{Name: name, Holder: holder, Token: token})
	return n > 0, classify("release lease", resLease, err)
}

// ListLeases lists every lease by name.
func (q *queries) ListLeases(ctx context.Context) ([]store.Lease, error) {
	rows, err := q.rq.ListLeases(ctx)
	if err != nil {
		return nil, classify("list leases", resLease, err)
	}
	return mapRows(rows, total(leaseFromRow))
}
