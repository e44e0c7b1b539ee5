package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

func leaseOf(r pgdb.Lease) store.Lease {
	return store.Lease{Name: r.Name, Holder: r.Holder, Token: r.Token,
		AcquiredAt: r.AcquiredAt.UTC(), RenewedAt: r.RenewedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC()}
}

// AcquireLease takes or renews the lease name for holder until at+ttl.
func (q *queries) AcquireLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (store.Lease, bool, error) {
	if err := dialect.CheckAcquire(name, holder, ttl); err != nil {
		return store.Lease{}, false, err
	}
	at = stamp(at)
	r, err := q.q.AcquireLease(ctx, pgdb.AcquireLeaseParams{Name: name, Holder: holder, At: at, ExpiresAt: stamp(at.Add(ttl))})
	if err == nil {
		return leaseOf(r), true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return store.Lease{}, false, classify("acquire lease", dialect.Lease, err)
	}
	r, err = q.q.GetLease(ctx, name)
	if err != nil {
		return store.Lease{}, false, classify("read lease", dialect.Lease, err)
	}
	return leaseOf(r), false, nil
}

// ReleaseLease frees the lease name if holder holds it with token.
func (q *queries) ReleaseLease(ctx context.Context, name, holder string, token int64) (bool, error) {
	if err := dialect.Required(dialect.Lease, "name", name, "holder", holder); err != nil {
		return false, err
	}
	n, err := q.q.ReleaseLease(ctx, pgdb.ReleaseLeaseParams{Name: name, Holder: holder, Token: token})
	return n > 0, classify("release lease", dialect.Lease, err)
}

// ListLeases lists every lease by name.
func (q *queries) ListLeases(ctx context.Context) ([]store.Lease, error) {
	rows, err := q.q.ListLeases(ctx)
	if err != nil {
		return nil, classify("list leases", dialect.Lease, err)
	}
	return mapRows(rows, leaseOf), nil
}
