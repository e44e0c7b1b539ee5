package lifecycle_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/lifecycle"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// TestOverlappingRoundsExpireOnce: two replicas' rounds expire at the same
// moment over one store and one provider, as an old lifecycle lease
// holder's last round and its successor's first could at a takeover.
// The rows' versions fence them: each expired runtime is paused once,
// reported by one replica alone, its ledger row moved by one transition.
func TestOverlappingRoundsExpireOnce(t *testing.T) {
	f := newFixture(t)
	const n = 8
	ids := map[string]int64{} // runtime → its row's version before expiry
	for i := range n {
		rt := f.started(t, fmt.Sprintf("p%d", i), 60)
		_, sb := f.get(t, rt.ID)
		ids[rt.ID] = sb.Version
	}
	reg := provider.NewRegistry()
	reg.Register(f.env.Fake)
	other := runtime.New(runtime.Config{Store: f.env.Store, Providers: reg, Instance: f.env.Instance, Now: f.clk.Now})
	t.Cleanup(func() { other.Close() })
	replicas := []*lifecycle.Manager{f.m, lifecycle.New(lifecycle.Config{Store: f.env.Store, Runtimes: other, Now: f.clk.Now})}
	f.clk.Advance(2 * time.Minute)

	var (
		wg     sync.WaitGroup
		paused [2][]string
	)
	for i, m := range replicas {
		// A replica that lost a race may report it (runtime_busy); what
		// counts is what the store holds.
		wg.Go(func() { paused[i], _ = m.Expire(context.Background(), f.clk.Now()) })
	}
	wg.Wait()
	reported := map[string]int{}
	for _, ps := range paused {
		for _, id := range ps {
			reported[id]++
		}
	}
	for id, version := range ids {
		rt, sb := f.get(t, id)
		if reported[id] != 1 || rt.Status != store.RuntimePaused || sb.PauseReason != store.PauseTimeout || sb.Version != version+1 {
			t.Errorf("runtime %s: reported paused %d times, %s, row %s (%s) at version %d; want paused once, from version %d",
				id, reported[id], rt.Status, sb.State, sb.PauseReason, sb.Version, version)
		}
	}
}
