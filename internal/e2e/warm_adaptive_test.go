package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestWarmPoolAdapts: on Docker, a warm pool sized by its claim rate
// (min 1, max 3) holds its min while idle; a burst of starts grows it past
// its min, and once idle (the server's clock moved on) reconciliation
// shrinks it back to its min, destroying the compute it discards.
func TestWarmPoolAdapts(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	const lo, hi = 1, 3
	e := newLifeEnv(t, servertest.Options{WarmPools: []runtime.WarmPool{
		{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64, Min: lo, Max: hi, Window: 10 * time.Second},
	}})
	ctx := t.Context()
	warm := func() int {
		t.Helper()
		ws, err := e.env.Store.ListWarmSandboxes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(ws)
	}
	if made, err := e.env.Runtimes.FillWarmPools(ctx); err != nil || made != lo {
		t.Fatalf("an idle pool filled %d, %v; want its min %d", made, err, lo)
	}

	// A burst: eight starts at once on the server's clock; the pool's
	// one sandbox goes to the first, the others start cold.
	for i := range 8 {
		rid := e.project(t, fmt.Sprintf("p%d", i), pc.RuntimeConfig{})
		e.env.Must(t, 200, "POST", rtPath(rid)+"/start", nil)
	}
	if _, err := e.env.Runtimes.FillWarmPools(ctx); err != nil {
		t.Fatal(err)
	}
	grown := warm()
	if grown <= lo || grown > hi {
		t.Fatalf("after a burst of starts the pool holds %d, want more than its min %d and at most its max %d", grown, lo, hi)
	}
	var st pc.WarmPoolStatus
	e.env.Must(t, 200, "GET", "/api/v1/warm-pool", nil).Decode(t, &st)
	if len(st.Pools) != 1 || st.Pools[0].Size != grown {
		t.Fatalf("the warm-pool view %+v, want size %d", st.Pools, grown)
	}

	// Idle: ten windows later the target is back at the min, and the
	// reconciliation discards the rest.
	e.clock.Advance(100 * time.Second)
	if n, err := e.env.Runtimes.ReconcileWarm(ctx); err != nil || n != grown-lo {
		t.Fatalf("idle, reconciliation discarded %d, %v; want %d", n, err, grown-lo)
	}
	if n := warm(); n != lo {
		t.Fatalf("idle, the pool holds %d, want its min %d", n, lo)
	}
	if made, err := e.env.Runtimes.FillWarmPools(ctx); err != nil || made != 0 {
		t.Fatalf("idle, the filler made %d, %v; want none", made, err)
	}
}
