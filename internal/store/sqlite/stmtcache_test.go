package sqlite

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// watchedCtx is a context that counts the asks for its Done channel: a
// query that watches its context asks for it.
type watchedCtx struct {
	context.Context
	asked atomic.Int32
}

func (c *watchedCtx) Done() <-chan struct{} {
	c.asked.Add(1)
	return c.Context.Done()
}

// openTemp opens a store in a file of the test's, closed at its end.
func openTemp(tb testing.TB) *Store {
	tb.Helper()
	st, err := Open(context.Background(), filepath.Join(tb.TempDir(), "paddock.db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// TestOneRowReadsDoNotWatchTheirContext checks that a one-row read on the
// read pool runs without watching its caller's context (no goroutine of
// the driver's or database/sql's waits on it), that a context already
// ended still refuses it, and that a write still watches its context.
func TestOneRowReadsDoNotWatchTheirContext(t *testing.T) {
	st := openTemp(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := &watchedCtx{Context: ctx}
	for range 2 { // the second with the statement prepared
		if _, err := st.GetOrgByName(w, "acme"); !errdefs.IsNotFound(err) {
			t.Fatalf("GetOrgByName: %v, want not found", err)
		}
	}
	if n := w.asked.Load(); n != 0 {
		t.Fatalf("a one-row read asked for its context's Done %d times, want none", n)
	}
	if _, err := st.queries.w.ExecContext(w, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if w.asked.Load() == 0 {
		t.Fatal("a statement on the write pool did not watch its context")
	}
	cancel()
	if _, err := st.GetOrgByName(w, "acme"); err == nil || errdefs.IsNotFound(err) {
		t.Fatalf("GetOrgByName with its context ended: %v, want a refusal", err)
	}
}

// BenchmarkOneRowRead times a one-row read on the read pool (an org by
// its name, not found) with a context that can end, as a request's can,
// and with one that cannot (the baseline, which nothing can watch), in
// the same run.
func BenchmarkOneRowRead(b *testing.B) {
	st := openTemp(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"uncancellable", context.Background()}, {"cancellable", ctx}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := st.GetOrgByName(c.ctx, "acme"); !errdefs.IsNotFound(err) {
					b.Fatalf("GetOrgByName: %v, want not found", err)
				}
			}
		})
	}
}
