package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// acquire takes or renews the lease name for holder at at and fails the
// test unless the store says held.
func (f *fixture) acquire(name, holder string, at time.Time, ttl time.Duration, held bool) store.Lease {
	f.t.Helper()
	l, ok, err := f.s.AcquireLease(f.ctx, name, holder, at, ttl)
	must(f.t, err)
	if ok != held {
		f.t.Fatalf("AcquireLease(%s, %s) at %s: held = %v, want %v (lease %+v)", name, holder, at, ok, held, l)
	}
	return l
}

func testLeases(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	name := "settle-" + uuid.NewString()[:8]
	ttl := 15 * time.Second
	t0 := f.next()

	first := f.acquire(name, "a", t0, ttl, true)
	want := store.Lease{Name: name, Holder: "a", Token: 1, AcquiredAt: ts(t0), RenewedAt: ts(t0), ExpiresAt: ts(t0.Add(ttl))}
	equal(t, "a free lease, acquired", first, want)

	t.Run("renewal keeps the token and moves the expiry", func(t *testing.T) {
		at := t0.Add(5 * time.Second)
		got := f.acquire(name, "a", at, ttl, true)
		want.RenewedAt, want.ExpiresAt = ts(at), ts(at.Add(ttl))
		equal(t, "renewed lease", got, want)
	})

	t.Run("another holder is refused while it is held", func(t *testing.T) {
		got := f.acquire(name, "b", want.ExpiresAt.Add(-time.Microsecond), ttl, false)
		equal(t, "the holder's lease, unchanged", got, want)
	})

	var taken store.Lease
	t.Run("another holder takes it once it expired, with a larger token", func(t *testing.T) {
		at := want.ExpiresAt
		taken = f.acquire(name, "b", at, ttl, true)
		equal(t, "lease taken over", taken,
			store.Lease{Name: name, Holder: "b", Token: 2, AcquiredAt: ts(at), RenewedAt: ts(at), ExpiresAt: ts(at.Add(ttl))})
		// The old holder cannot renew it, nor release it.
		f.acquire(name, "a", at.Add(time.Second), ttl, false)
		released, err := s.ReleaseLease(ctx, name, "a", first.Token)
		must(t, err)
		if released {
			t.Fatal("the old holder released a lease another holds")
		}
	})

	t.Run("release frees it at once, only by its holder and token", func(t *testing.T) {
		released, err := s.ReleaseLease(ctx, name, "b", taken.Token-1)
		must(t, err)
		if released {
			t.Fatal("released with a stale token")
		}
		released, err = s.ReleaseLease(ctx, name, "b", taken.Token)
		must(t, err)
		if !released {
			t.Fatal("the holder could not release its lease")
		}
		// Long before the old expiry, a new holding: the next token.
		at := taken.AcquiredAt.Add(time.Second)
		got := f.acquire(name, "a", at, ttl, true)
		if got.Token != taken.Token+1 || got.Holder != "a" || !got.AcquiredAt.Equal(ts(at)) {
			t.Fatalf("after a release: %+v, want holder a with token %d acquired at %s", got, taken.Token+1, ts(at))
		}
		// Its holder taking it again after a release is a new holding too.
		_, err = s.ReleaseLease(ctx, name, "a", got.Token)
		must(t, err)
		if again := f.acquire(name, "a", at, ttl, true); again.Token != got.Token+1 {
			t.Fatalf("re-acquired after its own release: token %d, want %d", again.Token, got.Token+1)
		}
	})

	testLeaseListAndInput(t, s, f, name, t0, ttl)
}

// testLeaseListAndInput lists leases beside name (held by a) and checks
// the refused arguments.
func testLeaseListAndInput(t *testing.T, s store.Store, f *fixture, name string, t0 time.Time, ttl time.Duration) {
	ctx := f.ctx
	t.Run("list", func(t *testing.T) {
		other := "archive-" + uuid.NewString()[:8]
		f.acquire(other, "c", t0, ttl, true)
		ls, err := s.ListLeases(ctx)
		must(t, err)
		byName := map[string]store.Lease{}
		for _, l := range ls {
			byName[l.Name] = l
		}
		if len(ls) != 2 || byName[name].Holder != "a" || byName[other].Holder != "c" || byName[other].Token != 1 {
			t.Fatalf("ListLeases = %+v, want %s held by a and %s by c", ls, name, other)
		}
	})

	t.Run("invalid", func(t *testing.T) {
		_, _, err := s.AcquireLease(ctx, "", "a", t0, ttl)
		wantKind(t, err, errdefs.ErrInvalidArgument)
		_, _, err = s.AcquireLease(ctx, name, "", t0, ttl)
		wantKind(t, err, errdefs.ErrInvalidArgument)
		_, _, err = s.AcquireLease(ctx, name, "a", t0, 0)
		wantKind(t, err, errdefs.ErrInvalidArgument)
		_, err = s.ReleaseLease(ctx, name, "", 1)
		wantKind(t, err, errdefs.ErrInvalidArgument)
	})
}

// testLeaseRace has many replicas acquire one lease at once, free and then
// expired: exactly one holds it each time, and the takeover's token is the
// next one.
func testLeaseRace(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	name := "lifecycle-" + uuid.NewString()[:8]
	ttl := 10 * time.Second
	t0 := f.next()
	const n = 16
	var last store.Lease
	for round, at := range []time.Time{t0, t0.Add(ttl)} {
		held := make([]store.Lease, n)
		ok := make([]bool, n)
		errs := race(n, func(i int) (err error) {
			held[i], ok[i], err = s.AcquireLease(f.ctx, name, fmt.Sprintf("replica-%d-%d", round, i), at, ttl)
			return err
		})
		var winners []store.Lease
		for i := range n {
			must(t, errs[i])
			if ok[i] {
				winners = append(winners, held[i])
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d replicas hold the lease at once: %+v", round, len(winners), winners)
		}
		w := winners[0]
		if w.Token != last.Token+1 || w.Holder == last.Holder {
			t.Fatalf("round %d: holder %s with token %d after %s's %d; want a new holder with the next token", round, w.Holder, w.Token, last.Holder, last.Token)
		}
		for i := range n {
			if !ok[i] && held[i] != w {
				t.Fatalf("round %d: a refused replica saw %+v, not the winner's %+v", round, held[i], w)
			}
		}
		last = w
	}
}
