package lease_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// mortal is a replica's way to a real store that dies with it: once
// dead, it renews and releases nothing.
type mortal struct {
	*sqlite.Store
	dead atomic.Bool
}

func (m *mortal) AcquireLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (store.Lease, bool, error) {
	if m.dead.Load() {
		return store.Lease{}, false, errGone
	}
	return m.Store.AcquireLease(ctx, name, holder, at, ttl)
}

func (m *mortal) ReleaseLease(ctx context.Context, name, holder string, token int64) (bool, error) {
	if m.dead.Load() {
		return false, errGone
	}
	return m.Store.ReleaseLease(ctx, name, holder, token)
}

// TestPresence: two replicas announce themselves and keep their
// presences. Each sees the other live for as long as it renews: what the
// other runs is not orphaned, while what runs under no known runner or a
// replica never seen is, and its own is only when it restarts. A replica
// that dies is seen gone within the TTL, and live again once it renews; one
// that stops releases its presence, gone at once.
func TestPresence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ctx := t.Context()
		sa, sb := &mortal{Store: st}, &mortal{Store: st}
		a := lease.NewPresence(sa, lease.Config{Replica: "a", TTL: ttl})
		b := lease.NewPresence(sb, lease.Config{Replica: "b", TTL: ttl})
		var wg sync.WaitGroup
		defer wg.Wait()
		keep := func(p *lease.Presence) context.CancelFunc {
			if err := p.Announce(ctx); err != nil {
				t.Fatal(err)
			}
			kctx, stop := context.WithCancel(ctx)
			wg.Go(func() { p.Keep(kctx) })
			return stop
		}
		stopA, stopB := keep(a), keep(b)
		defer stopA()
		synctest.Wait()
		runners := func(p *lease.Presence) lease.Runners {
			t.Helper()
			r, err := p.Runners(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}

		time.Sleep(5 * time.Minute) // renewed all along
		synctest.Wait()
		seen := runners(b)
		for _, c := range []struct {
			runner  string
			restart bool
			want    bool
		}{
			{"", false, false}, {"", true, true}, // unknown: only at a start
			{"a", false, false}, {"a", true, false}, // live
			{"b", false, false}, {"b", true, true}, // itself
			{"c", false, true}, // never seen
		} {
			if got := seen.Orphaned(c.runner, c.restart); got != c.want {
				t.Errorf("b sees %q (restart %v) orphaned %v, want %v", c.runner, c.restart, got, c.want)
			}
		}
		if !seen.Live("a") || !seen.Live("b") {
			t.Fatal("b does not see both live")
		}
		if !(lease.Runners{}).Orphaned("a", false) {
			t.Fatal("knowing no replica, a's are not orphaned")
		}
		if (lease.Runners{}).Orphaned("", false) {
			t.Fatal("a sweep takes rows of no known runner; only a start may")
		}

		sa.dead.Store(true)
		died := time.Now()
		for runners(b).Live("a") {
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if gone := time.Since(died); gone > ttl {
			t.Fatalf("a seen gone %s after it died; want within the TTL (%s)", gone, ttl)
		}
		if !runners(b).Orphaned("a", false) {
			t.Fatal("a's, gone, are not orphaned")
		}
		sa.dead.Store(false) // its store answers again: it renews
		for !runners(b).Live("a") {
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if back := time.Since(died); back > 2*ttl {
			t.Fatalf("a live again %s after it died; want within two TTLs", back)
		}

		stopB()
		synctest.Wait()
		if runners(a).Live("b") {
			t.Fatal("b, stopped, is still live")
		}
	})
}
