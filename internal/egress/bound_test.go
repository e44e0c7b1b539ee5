package egress

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// TestBoundAddrs: a sandbox's credentials hold from its own address only;
// a request from elsewhere asks the provider again, but not at every
// request.
func TestBoundAddrs(t *testing.T) {
	b := newBoundAddrs()
	own, other := netip.MustParseAddr("172.30.0.2"), netip.MustParseAddr("172.30.0.3")
	reads := 0
	read := func(context.Context, store.Sandbox) ([]netip.Addr, error) {
		reads++
		return []netip.Addr{own}, nil
	}
	sb := store.Sandbox{ID: "sb-1"}
	for i, tc := range []struct {
		from      netip.Addr
		want      bool
		wantReads int
	}{
		{own, true, 1},    // read once
		{own, true, 1},    // remembered
		{other, false, 1}, // just read: not again
		{other, false, 1},
	} {
		if got := b.holds(t.Context(), sb, tc.from, read); got != tc.want || reads != tc.wantReads {
			t.Fatalf("request %d from %s: %v after %d reads, want %v after %d", i, tc.from, got, reads, tc.want, tc.wantReads)
		}
	}
	b.forget(sb.ID)
	if b.holds(t.Context(), sb, other, read) || reads != 2 {
		t.Fatalf("after forget: %d reads", reads)
	}
}

// TestBoundAddrsForgetAStoppedSandbox: what was read for a running sandbox
// is forgotten once its state changes (a pause or stop moves its
// version) and once it is older than boundTTL: an address the sandbox
// gave up, now another container's, no longer holds its credentials.
func TestBoundAddrsForgetAStoppedSandbox(t *testing.T) {
	b := newBoundAddrs()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.now = func() time.Time { return now }
	old, next := netip.MustParseAddr("172.30.0.2"), netip.MustParseAddr("172.30.0.9")
	at := old
	reads := 0
	read := func(context.Context, store.Sandbox) ([]netip.Addr, error) {
		reads++
		return []netip.Addr{at}, nil
	}
	sb := store.Sandbox{ID: "sb-1", State: store.SandboxRunning, Version: 3}
	if !b.holds(t.Context(), sb, old, read) || reads != 1 {
		t.Fatalf("running: not held after %d reads", reads)
	}
	// It pauses and runs again elsewhere; another container has its old
	// address.
	at = next
	sb.State, sb.Version = store.SandboxPaused, 4
	if b.holds(t.Context(), sb, old, read) || reads != 2 {
		t.Fatalf("after a pause: the old address still holds (%d reads)", reads)
	}
	sb.State, sb.Version = store.SandboxRunning, 5
	if b.holds(t.Context(), sb, old, read) || !b.holds(t.Context(), sb, next, read) {
		t.Fatal("after a resume: the old address holds, or the new one does not")
	}
	// Without a state change, an entry lives boundTTL.
	readsBefore := reads
	at = old
	now = now.Add(boundTTL - time.Second)
	if !b.holds(t.Context(), sb, next, read) || reads != readsBefore {
		t.Fatalf("within the TTL: read again (%d reads)", reads)
	}
	now = now.Add(2 * time.Second)
	if b.holds(t.Context(), sb, next, read) || reads != readsBefore+1 {
		t.Fatalf("past the TTL: the remembered address still holds (%d reads)", reads)
	}
}
