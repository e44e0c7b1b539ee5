package api

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	_ "github.com/paddockhq/paddock/internal/store/postgres" // the "postgres" store
	_ "github.com/paddockhq/paddock/internal/store/sqlite"   // the "sqlite" store
	"github.com/paddockhq/paddock/internal/testenv"
)

func openStore(t *testing.T, dsn string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// wantOpen takes a stream of c for runtime and user and fails the test
// unless it is refused with code ("": taken); it returns the release.
func wantOpen(t *testing.T, c *caps, runtime, user, code string) func() {
	t.Helper()
	release, err := c.acquire(t.Context(), runtime, user)
	got := ""
	if pe, ok := errdefs.Public(err); ok {
		got = pe.Code
		if !errors.Is(err, errdefs.ErrResourceExhausted) {
			t.Fatalf("%s on %s: %v, want a resource exhausted error", user, runtime, err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	if got != code {
		t.Fatalf("%s on %s: code %q, want %q", user, runtime, got, code)
	}
	return release
}

// TestSharedCapsAcrossReplicas: two replicas on one PostgreSQL database
// share the exec stream caps: a runtime's N streams are counted across
// both, and the N+1th is refused on either with the code a single server
// answers. A replica that lives renews its holds; once it dies (it renews
// no more), its streams stop counting within the TTL.
func TestSharedCapsAcrossReplicas(t *testing.T) {
	st := openStore(t, testenv.Postgres(t))
	clock := testenv.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	const ttl = 15 * time.Second
	replica := func(id string) (*SharedLimits, *caps) {
		s := NewSharedLimits(SharedLimitsConfig{Store: st, Replica: id, TTL: ttl, Now: clock.Now})
		return s, &caps{kind: "exec_streams", perRuntime: 3, perUser: 2, state: s}
	}
	a, capsA := replica("replica-a")
	b, capsB := replica("replica-b")

	wantOpen(t, capsA, "rt-1", "ann", "")
	wantOpen(t, capsA, "rt-1", "bob", "")
	fromB := wantOpen(t, capsB, "rt-1", "cid", "")
	wantOpen(t, capsA, "rt-1", "dee", "too_many_exec_streams_per_runtime")
	wantOpen(t, capsB, "rt-1", "dee", "too_many_exec_streams_per_runtime")

	t.Run("a user's cap counts across replicas", func(t *testing.T) {
		wantOpen(t, capsB, "rt-2", "ann", "")
		wantOpen(t, capsB, "rt-2", "ann", "too_many_exec_streams_per_user")
		wantOpen(t, capsA, "rt-3", "ann", "too_many_exec_streams_per_user")
	})
	t.Run("a stream that ends gives its place back to either", func(t *testing.T) {
		fromB()
		fromB()
		wantOpen(t, capsA, "rt-1", "cid", "")
		wantOpen(t, capsB, "rt-1", "dee", "too_many_exec_streams_per_runtime")
	})
	t.Run("a live replica's streams count past the TTL", func(t *testing.T) {
		for range 2 {
			clock.Advance(ttl / 2)
			must(t, a.Renew(t.Context()))
			must(t, b.Renew(t.Context()))
		}
		wantOpen(t, capsB, "rt-1", "dee", "too_many_exec_streams_per_runtime")
	})
	t.Run("a dead replica's streams stop counting within the TTL", func(t *testing.T) {
		// a renews no more: it died.
		clock.Advance(ttl - time.Second)
		must(t, b.Renew(t.Context()))
		wantOpen(t, capsB, "rt-1", "dee", "too_many_exec_streams_per_runtime")
		clock.Advance(time.Second)
		wantOpen(t, capsB, "rt-1", "dee", "")
		wantOpen(t, capsB, "rt-1", "eve", "")
		wantOpen(t, capsB, "rt-1", "fay", "")
		wantOpen(t, capsB, "rt-1", "gus", "too_many_exec_streams_per_runtime")
	})
}

// TestSharedLimitsRun: Run renews the replica's holds for as long as it
// runs, so a stream outlives its first TTL; once it stops (the replica
// died), the stream stops counting within a TTL.
func TestSharedLimitsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "p.db"), nil)
		must(t, err)
		defer st.Close()
		const ttl = 15 * time.Second
		s := NewSharedLimits(SharedLimitsConfig{Store: st, Replica: "a", TTL: ttl})
		other := &caps{kind: "terminals", perRuntime: 1, perUser: -1,
			state: NewSharedLimits(SharedLimitsConfig{Store: st, Replica: "b", TTL: ttl})}
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.Run(ctx)
		}()
		wantOpen(t, &caps{kind: "terminals", perRuntime: 1, perUser: -1, state: s}, "rt", "ann", "")
		time.Sleep(3 * ttl)
		wantOpen(t, other, "rt", "bob", "too_many_terminals_per_runtime")
		stop()
		<-done
		time.Sleep(ttl)
		wantOpen(t, other, "rt", "bob", "")
	})
}

// TestLocalCapsUnchanged: without a shared state, the caps are counted in
// the process, by runtime and by user, and a cap turned off counts
// nothing.
func TestLocalCapsUnchanged(t *testing.T) {
	l := newLocalLimits(time.Now)
	c := &caps{kind: "exec_streams", perRuntime: 1, perUser: -1, state: l}
	release := wantOpen(t, c, "rt", "ann", "")
	wantOpen(t, c, "rt", "bob", "too_many_exec_streams_per_runtime")
	release()
	release()
	wantOpen(t, c, "rt", "bob", "")
	if fmt.Sprint(l.held) != fmt.Sprint(map[Cap]int{{Kind: "exec_streams_per_runtime", Key: "rt"}: 1}) {
		t.Fatalf("held %v, want one stream on rt and no user counted", l.held)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
