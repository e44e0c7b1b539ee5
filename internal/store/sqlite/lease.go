package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Leases (migration 0012).

const resLease resource = "lease"

const leaseColumns = "name, holder, token, acquired_at, renewed_at, expires_at"

func scanLease(sc rowScanner) (store.Lease, error) {
	var l store.Lease
	var acquired, renewed, expires int64
	if err := sc.Scan(&l.Name, &l.Holder, &l.Token, &acquired, &renewed, &expires); err != nil {
		return store.Lease{}, err
	}
	l.AcquiredAt = time.UnixMicro(acquired).UTC()
	l.RenewedAt = time.UnixMicro(renewed).UTC()
	l.ExpiresAt = time.UnixMicro(expires).UTC()
	return l, nil
}

// acquireLease inserts a lease never taken, or takes one that is free,
// expired or already the holder's, in one statement: the upsert's WHERE
// leaves another holder's live lease alone, and then nothing is returned.
// A change of holder increments the token and restarts acquired_at.
const acquireLease = `INSERT INTO leases (` + leaseColumns + `) VALUES (?, ?, 1, ?, ?, ?)
	ON CONFLICT (name) DO UPDATE SET
		token = CASE WHEN leases.holder = excluded.holder THEN leases.token ELSE leases.token + 1 END,
		acquired_at = CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at ELSE excluded.acquired_at END,
		holder = excluded.holder, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at
	WHERE leases.holder = excluded.holder OR leases.holder = '' OR leases.expires_at <= excluded.renewed_at
	RETURNING ` + leaseColumns

// AcquireLease takes or renews the lease name for holder until at+ttl.
func (q *queries) AcquireLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (store.Lease, bool, error) {
	if err := required(resLease, "name", name, "holder", holder); err != nil {
		return store.Lease{}, false, err
	}
	if ttl <= 0 {
		return store.Lease{}, false, errdefs.InvalidArgument("invalid_lease", "a lease's ttl must be positive, not %s", ttl)
	}
	l, err := scanLease(q.w.QueryRowContext(ctx, acquireLease,
		name, holder, micros(at), micros(at), micros(at.Add(ttl))))
	if err == nil {
		return l, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.Lease{}, false, classify("acquire lease", resLease, err)
	}
	l, err = scanLease(q.w.QueryRowContext(ctx, "SELECT "+leaseColumns+" FROM leases WHERE name = ?", name))
	return l, false, classify("read lease", resLease, err)
}

// ReleaseLease frees the lease name if holder holds it with token.
func (q *queries) ReleaseLease(ctx context.Context, name, holder string, token int64) (bool, error) {
	if err := required(resLease, "name", name, "holder", holder); err != nil {
		return false, err
	}
	r, err := q.w.ExecContext(ctx, "UPDATE leases SET holder = '' WHERE name = ? AND holder = ? AND token = ?",
		name, holder, token)
	if err != nil {
		return false, classify("release lease", resLease, err)
	}
	n, err := r.RowsAffected()
	return n > 0, classify("release lease", resLease, err)
}

// ListLeases lists every lease by name.
func (q *queries) ListLeases(ctx context.Context) ([]store.Lease, error) {
	rows, err := q.r.QueryContext(ctx, "SELECT "+leaseColumns+" FROM leases ORDER BY name")
	if err != nil {
		return nil, classify("list leases", resLease, err)
	}
	ls, err := collect(rows, scanLease)
	return ls, classify("list leases", resLease, err)
}
