package lifecycle_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/lifecycle"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// TestRunOnItsTimers runs the manager on its own tickers in a synctest
// bubble, over a runtime service on a real SQLite store and the fake
// provider, all on the bubble's clock: nobody calls Tick. A runtime idle
// past its timeout is paused with reason timeout, then archived once
// paused past archive_after; the warm pool is filled when Run starts and
// refilled at once behind a claim, not a round later.
func TestRunOnItsTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
		must(t, err)
		t.Cleanup(func() { st.Close() })
		prov := fake.New(fake.Config{})
		reg := provider.NewRegistry()
		reg.Register(prov)
		rts := runtime.New(runtime.Config{Store: st, Providers: reg, Instance: "i",
			Defaults: runtime.Defaults{Image: "paddock/base:1"}, WarmPools: []runtime.WarmPool{{Size: 1, MemoryMB: 512}}})
		t.Cleanup(func() { rts.Close() })
		now := time.Now().UTC()
		ws := store.Workspace{ID: uuid.NewString(), OrgID: uuid.NewString(), Name: "dev", CreatedAt: now}
		must(t, st.CreateOrg(ctx, store.Org{ID: ws.OrgID, Name: "acme", CreatedAt: now}))
		must(t, st.CreateWorkspace(ctx, ws))

		m := lifecycle.New(lifecycle.Config{Store: st, Runtimes: rts, Interval: 5 * time.Second, ReconcileEvery: time.Hour})
		runCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { m.Run(runCtx) })
		defer wg.Wait()
		defer stop()

		synctest.Wait()
		if n := warm(t, st); n != 1 {
			t.Fatalf("%d warm sandboxes once Run started, want 1", n)
		}

		_, idle, err := rts.CreateProject(ctx, ws, "idle", "", runtime.ConfigRequest{IdleTimeoutSeconds: 60, ArchiveAfterSeconds: 600})
		must(t, err)
		_, err = rts.Start(ctx, idle.ID, nil)
		must(t, err)
		_, pooled, err := rts.CreateProject(ctx, ws, "pooled", "", runtime.ConfigRequest{MemoryMB: 512})
		must(t, err)
		_, err = rts.Start(ctx, pooled.ID, nil)
		must(t, err)
		synctest.Wait() // the claim's refill is done; no round has passed
		if n := warm(t, st); n != 1 || prov.Calls(fake.OpCreate) != 3 {
			t.Fatalf("after a claim: %d warm, %d creates; want the pool refilled at once", n, prov.Calls(fake.OpCreate))
		}

		time.Sleep(59 * time.Second)
		synctest.Wait()
		if rt := get(t, st, idle.ID); rt.Status != store.RuntimeRunning {
			t.Fatalf("at 59 s of a 60 s idle timeout: %s", rt.Status)
		}
		time.Sleep(5 * time.Second) // the next round after the window passed
		synctest.Wait()
		rt := get(t, st, idle.ID)
		sb, err := st.GetSandbox(ctx, rt.CurrentSandboxID)
		must(t, err)
		if rt.Status != store.RuntimePaused || sb.PauseReason != store.PauseTimeout {
			t.Fatalf("idle past its timeout: %s (%s), want paused with reason timeout", rt.Status, sb.PauseReason)
		}
		if got := get(t, st, pooled.ID); got.Status != store.RuntimeRunning {
			t.Fatalf("the default idle timeout is 15 min; at 64 s the other runtime is %s", got.Status)
		}

		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if rt := get(t, st, idle.ID); rt.Status != store.RuntimeArchived {
			t.Fatalf("paused past archive_after: %s, want archived", rt.Status)
		}
	})
}

func warm(t *testing.T, st store.Store) int {
	t.Helper()
	ws, err := st.ListWarmSandboxes(t.Context())
	must(t, err)
	return len(ws)
}

func get(t *testing.T, st store.Store, id string) store.Runtime {
	t.Helper()
	rt, err := st.GetRuntime(t.Context(), id)
	must(t, err)
	return rt
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
