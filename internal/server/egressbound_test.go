package server

import (
	"context"
	"net/netip"
	"testing"

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
