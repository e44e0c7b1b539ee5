package lease_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	name = "settle"
	ttl  = 20 * time.Second
)

// replica is one replica's elector over a store it can lose: once dead,
// every call to the store fails, as for a replica that crashed or was cut
// off (it renews nothing and releases nothing).
type replica struct {
	lease.Store
	dead atomic.Bool
	e    *lease.Elector
	// loop records the runs of the loop this replica ran under the lease.
	loop *loop
}

var errGone = errors.New("replica is gone")

func (r *replica) AcquireLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (store.Lease, bool, error) {
	if r.dead.Load() {
		return store.Lease{}, false, errGone
	}
	return r.Store.AcquireLease(ctx, name, holder, at, ttl)
}

func (r *replica) ReleaseLease(ctx context.Context, name, holder string, token int64) (bool, error) {
	if r.dead.Load() {
		return false, errGone
	}
	return r.Store.ReleaseLease(ctx, name, holder, token)
}

// loop is a background loop run under the lease by every replica: it
// records each run's start and end, and fails the test if two replicas
// run it at once.
type loop struct {
	t       *testing.T
	running *atomic.Int32
	mu      sync.Mutex
	runs    []run
}

type run struct {
	start, end time.Time // end zero while it runs
}

func (l *loop) fn(ctx context.Context) {
	if n := l.running.Add(1); n != 1 {
		l.t.Errorf("%d replicas run the loop at once", n)
	}
	l.mu.Lock()
	l.runs = append(l.runs, run{start: time.Now()})
	i := len(l.runs) - 1
	l.mu.Unlock()
	<-ctx.Done()
	l.running.Add(-1)
	l.mu.Lock()
	l.runs[i].end = time.Now()
	l.mu.Unlock()
}

func (l *loop) history() []run {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]run(nil), l.runs...)
}

// cluster is replicas of one store, each running the loop under the
// lease until the test ends or the replica stops.
type cluster struct {
	t       *testing.T
	st      *sqlite.Store
	running atomic.Int32
	wg      sync.WaitGroup
}

func newCluster(t *testing.T) *cluster {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, st: st}
	t.Cleanup(func() {
		c.wg.Wait()
		st.Close()
	})
	return c
}

// start starts a replica named id; stop ends it gracefully.
func (c *cluster) start(id string) (r *replica, stop context.CancelFunc) {
	r = &replica{Store: c.st, loop: &loop{t: c.t, running: &c.running}}
	r.e = lease.New(lease.Config{Store: r, Replica: id, TTL: ttl})
	ctx, stop := context.WithCancel(c.t.Context())
	c.wg.Go(func() { r.e.Run(ctx, name, r.loop.fn) })
	c.t.Cleanup(stop)
	return r, stop
}

func held(t *testing.T, r *replica) lease.Held {
	t.Helper()
	hs := r.e.Held()
	if len(hs) != 1 || hs[0].Name != name {
		t.Fatalf("%s holds %+v, want the lease %s", r.e.Replica(), hs, name)
	}
	return hs[0]
}

func holdsNothing(t *testing.T, r *replica) {
	t.Helper()
	if hs := r.e.Held(); len(hs) != 0 || r.e.Holds(name) {
		t.Fatalf("%s holds %+v, want nothing", r.e.Replica(), hs)
	}
}

// TestOneRunsAtATime: of two replicas on one store, the first takes the
// lease and runs the loop, renewing it for minutes while the other waits;
// when the holder stops it releases the lease, and the other takes it at
// its next try (within a quarter of the TTL), with the next token.
func TestOneRunsAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a, stopA := c.start("a")
		synctest.Wait()
		b, _ := c.start("b")
		synctest.Wait()
		first := held(t, a)
		holdsNothing(t, b)
		if first.Token != 1 || !first.ExpiresAt.Equal(time.Now().Add(ttl)) {
			t.Fatalf("a holds %+v, want token 1 expiring a TTL from now", first)
		}

		time.Sleep(5 * time.Minute)
		synctest.Wait()
		renewed := held(t, a)
		holdsNothing(t, b)
		if renewed.Token != 1 || !renewed.ExpiresAt.After(time.Now()) {
			t.Fatalf("after 5 minutes a holds %+v, want token 1, renewed", renewed)
		}
		if len(b.loop.history()) != 0 || len(a.loop.history()) != 1 {
			t.Fatalf("a ran %d times, b %d; want a once, b never", len(a.loop.history()), len(b.loop.history()))
		}

		stopA()
		synctest.Wait()
		holdsNothing(t, a)
		time.Sleep(ttl / 4)
		synctest.Wait()
		next := held(t, b)
		holdsNothing(t, a)
		if next.Token != 2 {
			t.Fatalf("b took the released lease with token %d, want 2", next.Token)
		}
		aEnd := a.loop.history()[0].end
		if runs := b.loop.history(); len(runs) != 1 || runs[0].start.Before(aEnd) || runs[0].start.Sub(aEnd) > ttl/4 {
			t.Fatalf("b's runs %+v; want one, started within %s after a's ended (%s)", runs, ttl/4, aEnd)
		}
	})
}

// TestTakeoverWhenHolderDies: the holder dies (every call to the store
// fails: it neither renews nor releases). Its loop stops before its lease
// expires, and the other replica takes the lease within the TTL of the
// death, with a larger token; the two runs never overlap.
func TestTakeoverWhenHolderDies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a, _ := c.start("a")
		synctest.Wait()
		b, _ := c.start("b")
		time.Sleep(time.Minute)
		synctest.Wait()
		before := held(t, a)

		a.dead.Store(true)
		died := time.Now()
		for !b.e.Holds(name) {
			time.Sleep(time.Second)
			synctest.Wait()
		}
		took := time.Now()
		if took.Sub(died) > ttl {
			t.Fatalf("b took the lease %s after a died; want within the TTL (%s)", took.Sub(died), ttl)
		}
		holdsNothing(t, a)
		after := held(t, b)
		if after.Token <= before.Token {
			t.Fatalf("b's token %d, a's was %d; want larger", after.Token, before.Token)
		}
		aRuns, bRuns := a.loop.history(), b.loop.history()
		if len(aRuns) != 1 || aRuns[0].end.IsZero() || aRuns[0].end.After(before.ExpiresAt) {
			t.Fatalf("a's runs %+v; want one, stopped by its lease's expiry %s", aRuns, before.ExpiresAt)
		}
		if len(bRuns) != 1 || bRuns[0].start.Before(aRuns[0].end) {
			t.Fatalf("b's runs %+v; want one, started after a's ended (%s)", bRuns, aRuns[0].end)
		}
	})
}

// TestLostLeaseStopsLoop: another holder takes the lease from under the
// holder (its clock ran ahead past the expiry). The holder's next
// renewal finds it lost and stops the loop at once; it takes the lease
// back only once the other's has expired, with the next token.
func TestLostLeaseStopsLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a, _ := c.start("a")
		synctest.Wait()
		before := held(t, a)
		stolen, ok, err := c.st.AcquireLease(t.Context(), name, "fast-clock", before.ExpiresAt, ttl)
		if err != nil || !ok {
			t.Fatalf("take the lease at its expiry: %v, %v", ok, err)
		}

		time.Sleep(ttl / 4)
		synctest.Wait()
		holdsNothing(t, a)
		runs := a.loop.history()
		if len(runs) != 1 || runs[0].end.IsZero() || runs[0].end.Sub(runs[0].start) > ttl/4 {
			t.Fatalf("a's runs %+v; want its loop stopped at its first renewal after the loss", runs)
		}

		for !a.e.Holds(name) {
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if now := time.Now(); now.Before(stolen.ExpiresAt) {
			t.Fatalf("a took the lease back at %s, before the other's expiry %s", now, stolen.ExpiresAt)
		}
		if h := held(t, a); h.Token != stolen.Token+1 {
			t.Fatalf("a's token %d, want %d", h.Token, stolen.Token+1)
		}
		if runs := a.loop.history(); len(runs) != 2 {
			t.Fatalf("a ran its loop %d times, want twice", len(runs))
		}
	})
}
