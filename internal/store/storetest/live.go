package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// draw draws from key's bucket at at and fails the test unless the store
// answers taken and wait.
func (f *fixture) draw(key string, rate store.BucketRate, at time.Time, taken bool, wait time.Duration) {
	f.t.Helper()
	ok, w, err := f.s.TakeToken(f.ctx, key, rate, at)
	must(f.t, err)
	if ok != taken || w != wait {
		f.t.Fatalf("TakeToken(%s) at %s: taken %v, wait %s; want %v, %s", key, at, ok, w, taken, wait)
	}
}

func testBuckets(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	key := "key:" + uuid.NewString()
	rate := store.BucketRate{PerSecond: 2, Burst: 3}
	t0 := f.next()

	t.Run("a new bucket is full: the burst, then the wait for one token", func(t *testing.T) {
		for range 3 {
			f.draw(key, rate, t0, true, 0)
		}
		f.draw(key, rate, t0, false, 500*time.Millisecond)
	})
	t.Run("it refills by the time elapsed", func(t *testing.T) {
		f.draw(key, rate, t0.Add(250*time.Millisecond), false, 250*time.Millisecond)
		f.draw(key, rate, t0.Add(500*time.Millisecond), true, 0)
		f.draw(key, rate, t0.Add(500*time.Millisecond), false, 500*time.Millisecond)
	})
	t.Run("never beyond its burst", func(t *testing.T) {
		at := t0.Add(time.Hour)
		for range 3 {
			f.draw(key, rate, at, true, 0)
		}
		f.draw(key, rate, at, false, 500*time.Millisecond)
	})
	t.Run("a draw stamped earlier refills nothing", func(t *testing.T) {
		f.draw(key, rate, t0.Add(time.Hour-time.Minute), false, 500*time.Millisecond)
	})
	t.Run("buckets are apart by key", func(t *testing.T) {
		f.draw(key+"-other", rate, t0.Add(time.Hour), true, 0)
	})
	t.Run("a swept bucket is full again", func(t *testing.T) {
		n, err := s.SweepBuckets(f.ctx, t0.Add(time.Hour))
		must(t, err)
		if n != 0 {
			t.Fatalf("swept %d buckets drawn from at the cut-off, want 0", n)
		}
		n, err = s.SweepBuckets(f.ctx, t0.Add(time.Hour+time.Microsecond))
		must(t, err)
		if n != 2 {
			t.Fatalf("swept %d buckets, want 2", n)
		}
		f.draw(key, rate, t0.Add(time.Hour), true, 0)
	})
	t.Run("bad input", func(t *testing.T) {
		for _, r := range []store.BucketRate{{PerSecond: 0, Burst: 1}, {PerSecond: -1, Burst: 1}, {PerSecond: 1, Burst: 0}} {
			_, _, err := s.TakeToken(f.ctx, key, r, t0)
			wantKind(t, err, errdefs.ErrInvalidArgument)
		}
		_, _, err := s.TakeToken(f.ctx, "", rate, t0)
		wantKind(t, err, errdefs.ErrInvalidArgument)
	})
}

// take takes a new hold of holder against caps until at+ttl and fails the
// test unless the store answers taken and held; it returns the hold's id.
func (f *fixture) take(holder string, caps []store.Cap, at time.Time, ttl time.Duration, taken bool, held ...int) string {
	f.t.Helper()
	h := store.Hold{ID: uuid.NewString(), Holder: holder, ExpiresAt: at.Add(ttl)}
	ok, got, err := f.s.TakeHold(f.ctx, h, caps, at)
	must(f.t, err)
	if ok != taken || fmt.Sprint(got) != fmt.Sprint(held) {
		f.t.Fatalf("TakeHold(%v) at %s: taken %v, held %v; want %v, %v", caps, at, ok, got, taken, held)
	}
	return h.ID
}

func testHolds(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	ttl := 15 * time.Second
	t0 := f.next()
	user := store.Cap{Kind: "exec_per_user", Key: uuid.NewString(), Max: 3}
	onRuntime := func() store.Cap { return store.Cap{Kind: "exec_per_runtime", Key: uuid.NewString(), Max: 2} }
	r1, r2, r3 := onRuntime(), onRuntime(), onRuntime()

	first := f.take("a", []store.Cap{r1, user}, t0, ttl, true, 0, 0)
	f.take("a", []store.Cap{r1, user}, t0, ttl, true, 1, 1)
	t.Run("a full cap refuses, and records nothing", func(t *testing.T) {
		f.take("a", []store.Cap{r1, user}, t0, ttl, false, 2, 2)
		f.take("b", []store.Cap{r2, user}, t0, ttl, true, 0, 2)
		f.take("b", []store.Cap{r3, user}, t0, ttl, false, 0, 3)
		f.take("b", []store.Cap{user, r3}, t0, ttl, false, 3, 0)
	})
	t.Run("a released hold frees its place in every cap", func(t *testing.T) {
		must(t, s.ReleaseHold(ctx, first))
		must(t, s.ReleaseHold(ctx, first))
		f.take("b", []store.Cap{r3, user}, t0, ttl, true, 0, 2)
		f.take("b", []store.Cap{r1, user}, t0, ttl, false, 1, 3)
	})
	t.Run("a cap of zero refuses all", func(t *testing.T) {
		f.take("a", []store.Cap{{Kind: "terminals_per_runtime", Key: r1.Key, Max: 0}}, t0, ttl, false, 0)
	})
	t.Run("bad input", func(t *testing.T) {
		at := t0
		for _, tc := range []struct {
			h    store.Hold
			caps []store.Cap
		}{
			{store.Hold{ID: "", Holder: "a", ExpiresAt: at.Add(ttl)}, []store.Cap{r1}},
			{store.Hold{ID: "x", Holder: "", ExpiresAt: at.Add(ttl)}, []store.Cap{r1}},
			{store.Hold{ID: "x", Holder: "a", ExpiresAt: at}, []store.Cap{r1}},
			{store.Hold{ID: "x", Holder: "a", ExpiresAt: at.Add(ttl)}, nil},
			{store.Hold{ID: "x", Holder: "a", ExpiresAt: at.Add(ttl)}, []store.Cap{r1, r1}},
			{store.Hold{ID: "x", Holder: "a", ExpiresAt: at.Add(ttl)}, []store.Cap{{Kind: "k", Key: "", Max: 1}}},
			{store.Hold{ID: "x", Holder: "a", ExpiresAt: at.Add(ttl)}, []store.Cap{{Kind: "k", Key: "x", Max: -1}}},
		} {
			_, _, err := s.TakeHold(ctx, tc.h, tc.caps, at)
			wantKind(t, err, errdefs.ErrInvalidArgument)
		}
	})
}

// testHoldExpiry: a holder that stops renewing (a dead replica) holds its
// caps only until its holds lapse; a live holder's renewed holds count on.
func testHoldExpiry(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	ttl := 15 * time.Second
	t0 := f.next()
	c := store.Cap{Kind: "exec_per_runtime", Key: uuid.NewString(), Max: 2}
	other := store.Cap{Kind: "exec_per_runtime", Key: uuid.NewString(), Max: 2}
	dead := f.take("dead", []store.Cap{c}, t0, ttl, true, 0)
	live := f.take("live", []store.Cap{c}, t0, ttl, true, 1)
	f.take("live", []store.Cap{other}, t0, ttl, true, 0)

	t.Run("renewal moves only the holder's own live holds", func(t *testing.T) {
		at := t0.Add(ttl / 2)
		n, err := s.RenewHolds(ctx, "live", []string{dead, live}, at, at.Add(ttl))
		must(t, err)
		if n != 1 {
			t.Fatalf("renewed %d holds, want 1 (the live holder's)", n)
		}
	})
	t.Run("a lapsed hold stops counting", func(t *testing.T) {
		f.take("b", []store.Cap{c}, t0.Add(ttl-time.Microsecond), ttl, false, 2)
		f.take("b", []store.Cap{c}, t0.Add(ttl), ttl, true, 1)
	})
	t.Run("and is not renewed", func(t *testing.T) {
		at := t0.Add(ttl)
		n, err := s.RenewHolds(ctx, "dead", []string{dead}, at, at.Add(ttl))
		must(t, err)
		if n != 0 {
			t.Fatalf("renewed %d lapsed holds, want 0", n)
		}
	})
	t.Run("a sweep forgets the lapsed holds", func(t *testing.T) {
		n, err := s.SweepHolds(ctx, t0.Add(ttl))
		must(t, err)
		if n != 2 {
			t.Fatalf("swept %d holds, want 2 (the dead holder's, the other cap's unrenewed)", n)
		}
		f.take("b", []store.Cap{c}, t0.Add(ttl), ttl, false, 2)
	})
}

// testHoldRace: concurrent takers against a cap of n: exactly n hold it,
// never more, whatever the interleaving.
func testHoldRace(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	const n, takers = 5, 24
	t0 := f.next()
	c := store.Cap{Kind: "exec_per_runtime", Key: uuid.NewString(), Max: n}
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	errs := make(chan error, takers)
	for i := range takers {
		wg.Go(func() {
			h := store.Hold{ID: uuid.NewString(), Holder: fmt.Sprintf("replica-%d", i%3), ExpiresAt: t0.Add(time.Minute)}
			user := store.Cap{Kind: "exec_per_user", Key: fmt.Sprintf("user-%d", i), Max: 10}
			ok, held, err := s.TakeHold(f.ctx, h, []store.Cap{c, user}, t0)
			if err != nil {
				errs <- err
				return
			}
			if held[0] > n {
				errs <- fmt.Errorf("a taker counted %d holds of a cap of %d", held[0], n)
			}
			if ok {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if taken != n {
		t.Fatalf("%d takers held a cap of %d", taken, n)
	}
	f.take("late", []store.Cap{c}, t0, time.Minute, false, n)
}
