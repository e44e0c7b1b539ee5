package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Leases (migration 0012).

func leaseFromRow(r litedb.Lease) store.Lease {
	return store.Lease{Name: r.Name, Holder: r.Holder, Token: r.Token,
		AcquiredAt: fromMicro(r.AcquiredAt), RenewedAt: fromMicro(r.RenewedAt), ExpiresAt: fromMicro(r.ExpiresAt)}
}

// AcquireLease takes or renews the lease name for holder until at+ttl.
func (q *queries) AcquireLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (store.Lease, bool, error) {
	if err := dialect.CheckAcquire(name, holder, ttl); err != nil {
		return store.Lease{}, false, err
	}
	r, err := q.wq.AcquireLease(ctx, litedb.AcquireLeaseParams{
		Name: name, Holder: holder, At: micros(at), ExpiresAt: micros(at.Add(ttl)),
	})
	if err == nil {
		return leaseFromRow(r), true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.Lease{}, false, classify("acquire lease", dialect.Lease, err)
	}
	r, err = q.wq.GetLease(ctx, name)
	if err != nil {
		return store.Lease{}, false, classify("read lease", dialect.Lease, err)
	}
	return leaseFromRow(r), false, nil
}

// ReleaseLease frees the lease name if holder holds it with token.
func (q *queries) ReleaseLease(ctx context.Context, name, holder string, token int64) (bool, error) {
	if err := required(dialect.Lease, "name", name, "holder", holder); err != nil {
		return false, err
	}
	n, err := q.wq.ReleaseLease(ctx, litedb.ReleaseLeaseParams{Name: name, Holder: holder, Token: token})
	return n > 0, classify("release lease", dialect.Lease, err)
}

// ListLeases lists every lease by name.
func (q *queries) ListLeases(ctx context.Context) ([]store.Lease, error) {
	rows, err := q.rq.ListLeases(ctx)
	if err != nil {
		return nil, classify("list leases", dialect.Lease, err)
	}
	return mapRows(rows, total(leaseFromRow))
}
