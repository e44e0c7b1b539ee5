package lifecycle_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/lifecycle"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// newFixtureOn is newFixture on a fake provider with the given switches.
func newFixtureOn(t *testing.T, cfg fake.Config) *fixture {
	t.Helper()
	clk := testenv.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cfg.Now = clk.Now
	env := servertest.New(t, servertest.Options{Now: clk.Now, Provider: fake.New(cfg), ArchiveAfter: time.Hour})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	m := lifecycle.New(lifecycle.Config{Store: env.Store, Runtimes: env.Runtimes, Now: clk.Now})
	return &fixture{env: env, clk: clk, m: m}
}

// TestExpiryWithoutPause: a provider that cannot pause archives an expired
// runtime (snapshot, compute released, row killed), every round succeeds,
// and the next start restores it.
func TestExpiryWithoutPause(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      fake.Config
		snapshot bool
	}{
		{"with snapshots", fake.Config{NoPause: true}, true},
		{"without snapshots", fake.Config{NoPause: true, NoSnapshot: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureOn(t, tc.cfg)
			ctx := context.Background()
			rt := f.started(t, "p1", 60)
			_, sb := f.get(t, rt.ID)

			f.clk.Advance(61 * time.Second)
			expired, err := f.m.Expire(ctx, f.clk.Now())
			if err != nil || len(expired) != 1 {
				t.Fatalf("Expire = %v, %v; want the runtime archived", expired, err)
			}
			got, _ := f.get(t, rt.ID)
			row, err := f.env.Store.GetSandbox(ctx, sb.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != store.RuntimeArchived || row.State != store.SandboxKilled || row.KillReason != "archived" {
				t.Fatalf("runtime %s, row %s (%s); want archived and killed with reason archived", got.Status, row.State, row.KillReason)
			}
			want := 0
			if tc.snapshot {
				want = 1
			}
			if (got.Snapshot != "") != tc.snapshot || len(f.env.Fake.Snapshots()) != want {
				t.Fatalf("snapshot %q (%d taken); want one only when the provider can", got.Snapshot, len(f.env.Fake.Snapshots()))
			}
			if live := f.env.Fake.Live(); len(live) != 0 {
				t.Fatalf("%d compute left after archiving; want none", len(live))
			}
			// More rounds find nothing to do and fail nothing.
			for range 3 {
				f.clk.Advance(time.Minute)
				if _, err := f.m.Expire(ctx, f.clk.Now()); err != nil {
					t.Fatalf("a later round: %v", err)
				}
				if _, err := f.m.Archive(ctx, f.clk.Now()); err != nil {
					t.Fatalf("a later archive round: %v", err)
				}
			}
			var back client.Runtime
			f.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+rt.ID+"/resume", nil).Decode(t, &back)
			if back.Status != "running" {
				t.Fatalf("resumed runtime is %s, want running", back.Status)
			}
		})
	}
}

// TestPauseWithoutPause: the pause action (and so the settler's pause for
// unpaid compute) archives on a provider that cannot pause, instead of
// failing.
func TestPauseWithoutPause(t *testing.T) {
	f := newFixtureOn(t, fake.Config{NoPause: true})
	rt := f.started(t, "p1", 600)
	var got client.Runtime
	f.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+rt.ID+"/pause", nil).Decode(t, &got)
	if got.Status != "archived" {
		t.Fatalf("paused runtime is %s, want archived", got.Status)
	}
	if live := f.env.Fake.Live(); len(live) != 0 {
		t.Fatalf("%d compute left; want none", len(live))
	}
}

// TestArchiveWithoutSnapshot: a provider that pauses but cannot snapshot
// archives a read-only runtime (its workspace holds all it keeps) and
// leaves a writable one paused.
func TestArchiveWithoutSnapshot(t *testing.T) {
	f := newFixtureOn(t, fake.Config{NoSnapshot: true})
	ctx := context.Background()
	ro := f.started(t, "ro", 60)
	var p client.Project
	f.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{
		Name: "rw", Runtime: &client.RuntimeConfig{IdleTimeoutSeconds: 60, RootFS: "writable"},
	}).Decode(t, &p)
	f.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil)

	f.clk.Advance(61 * time.Second)
	if paused, err := f.m.Expire(ctx, f.clk.Now()); err != nil || len(paused) != 2 {
		t.Fatalf("Expire = %v, %v; want both paused", paused, err)
	}
	f.clk.Advance(2 * time.Hour)
	archived, err := f.m.Archive(ctx, f.clk.Now())
	if err != nil || len(archived) != 1 || archived[0] != ro.ID {
		t.Fatalf("Archive = %v, %v; want only the read-only runtime %s", archived, err, ro.ID)
	}
	if rw, _ := f.get(t, p.RuntimeID); rw.Status != store.RuntimePaused {
		t.Fatalf("writable runtime is %s, want still paused", rw.Status)
	}
}

// TestWritableRootNeedsPauseOrSnapshot: a writable root on a provider that
// can neither pause nor snapshot is refused when the project is created.
func TestWritableRootNeedsPauseOrSnapshot(t *testing.T) {
	f := newFixtureOn(t, fake.Config{NoPause: true, NoSnapshot: true})
	res := f.env.Do(t, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{
		Name: "rw", Runtime: &client.RuntimeConfig{RootFS: "writable"},
	})
	if res.Status != http.StatusUnprocessableEntity || res.Code() != "rootfs_not_supported" {
		t.Fatalf("create = %d %s, want 422 rootfs_not_supported", res.Status, res.Body)
	}
}

// TestServeWhileReconciling: runtimes held for start-up reconciliation
// answer 503 reconciling, others are served, and each is released as
// reconciliation reaches it.
func TestServeWhileReconciling(t *testing.T) {
	f := newFixtureOn(t, fake.Config{})
	held := f.started(t, "held", 600)
	free := f.started(t, "free", 600)
	f.env.Runtimes.HoldForReconcile([]string{held.ID})
	if !f.env.Runtimes.Reconciling() {
		t.Fatal("Reconciling() = false with a runtime held")
	}
	res := f.env.Do(t, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+held.ID+"/pause", nil)
	if res.Status != http.StatusServiceUnavailable || res.Code() != "reconciling" {
		t.Fatalf("pause of a held runtime = %d %s, want 503 reconciling", res.Status, res.Body)
	}
	f.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+free.ID+"/pause", nil)

	if _, err := f.m.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.env.Runtimes.Reconciling() {
		t.Fatal("Reconciling() = true after reconciliation")
	}
	f.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+held.ID+"/pause", nil)
}

// TestReconcileIsConcurrent: reconciliation works on several runtimes at
// once, bounded: with every provider call gated, more than one runtime is
// in flight, and no more than the bound.
func TestReconcileIsConcurrent(t *testing.T) {
	clk := testenv.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	p := fake.New(fake.Config{Now: clk.Now})
	env := servertest.New(t, servertest.Options{Now: clk.Now, Provider: p})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	f := &fixture{env: env, clk: clk}
	const n, bound = 6, 3
	for i := range n {
		f.started(t, "p"+string(rune('a'+i)), 600)
	}
	m := lifecycle.New(lifecycle.Config{Store: env.Store, Runtimes: env.Runtimes, Now: clk.Now, Concurrency: bound})
	// In a synctest bubble, Wait returns once every call that could get in
	// has, and the rest of the reconciliation waits for a place.
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		p.SetGate(fake.OpInspect, gate)
		defer p.SetGate(fake.OpInspect, nil)
		done := make(chan error, 1)
		go func() { _, err := m.Reconcile(context.Background()); done <- err }()
		synctest.Wait()
		inFlight := p.Calls(fake.OpInspect)
		close(gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if inFlight != bound {
			t.Fatalf("%d runtimes in flight, want exactly the bound %d", inFlight, bound)
		}
	})
}
