package lifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/lifecycle"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

type fixture struct {
	env *servertest.Env
	clk *testenv.Clock
	m   *lifecycle.Manager
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clk := testenv.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	env := servertest.New(t, servertest.Options{Now: clk.Now})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	m := lifecycle.New(lifecycle.Config{Store: env.Store, Runtimes: env.Runtimes, Now: clk.Now})
	return &fixture{env: env, clk: clk, m: m}
}

// runtime creates a project with the given idle timeout and starts it.
func (f *fixture) started(t *testing.T, name string, idle int64) client.Runtime {
	t.Helper()
	var p client.Project
	f.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{
		Name: name, Runtime: &client.RuntimeConfig{IdleTimeoutSeconds: idle},
	}).Decode(t, &p)
	var rt client.Runtime
	f.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil).Decode(t, &rt)
	return rt
}

func (f *fixture) get(t *testing.T, id string) (store.Runtime, store.Sandbox) {
	t.Helper()
	rt, err := f.env.Store.GetRuntime(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var sb store.Sandbox
	if rt.CurrentSandboxID != "" {
		if sb, err = f.env.Store.GetSandbox(context.Background(), rt.CurrentSandboxID); err != nil {
			t.Fatal(err)
		}
	}
	return rt, sb
}

func TestExpiryPausesNeverKills(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rt := f.started(t, "p1", 60)
	keep := f.started(t, "p2", 60)

	f.clk.Advance(30 * time.Second)
	if paused, err := f.m.Expire(ctx, f.clk.Now()); err != nil || len(paused) != 0 {
		t.Fatalf("at 30s of a 60s window: paused %v, %v", paused, err)
	}
	// A keepalive on p2 moves its window past the next check.
	f.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+keep.ID+"/keepalive", client.KeepaliveRequest{DurationSeconds: 600})

	f.clk.Advance(31 * time.Second)
	paused, err := f.m.Expire(ctx, f.clk.Now())
	if err != nil || len(paused) != 1 || paused[0] != rt.ID {
		t.Fatalf("at 61s: paused %v, %v; want only %s", paused, err, rt.ID)
	}
	got, sb := f.get(t, rt.ID)
	if got.Status != store.RuntimePaused || sb.State != store.SandboxPaused || sb.PauseReason != store.PauseTimeout {
		t.Fatalf("expired runtime %s / row %s %s, want paused with reason timeout", got.Status, sb.State, sb.PauseReason)
	}
	live := f.env.Fake.Live()
	if len(live) != 2 {
		t.Fatalf("compute after expiry = %d, want 2 (expiry pauses, never destroys)", len(live))
	}
	for _, c := range live {
		if c.Handle.ID == sb.ProviderSandboxID && c.Status.State != provider.StatePaused {
			t.Fatalf("expired compute is %s, want paused", c.Status.State)
		}
	}
	if k, _ := f.get(t, keep.ID); k.Status != store.RuntimeRunning {
		t.Fatalf("kept-alive runtime is %s", k.Status)
	}
	// Resume renews the window; it is not immediately expired again.
	f.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+rt.ID+"/resume", nil)
	if paused, _ := f.m.Expire(ctx, f.clk.Now()); len(paused) != 0 {
		t.Fatalf("resumed runtime expired at once: %v", paused)
	}
}

// crash puts a runtime into the state a server killed mid-action leaves.
func TestReconcileAfterCrash(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	st := f.env.Store

	// 1. Killed mid-start: runtime and row starting, compute created but
	// never recorded on the row.
	var p client.Project
	f.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "mid-start"}).Decode(t, &p)
	midStart, _ := f.get(t, p.RuntimeID)
	row := store.Sandbox{
		ID: uuid.NewString(), OrgID: midStart.OrgID, WorkspaceID: midStart.WorkspaceID, ProjectID: midStart.ProjectID,
		RuntimeID: midStart.ID, Kind: store.KindRuntime, State: store.SandboxStarting, Provider: "fake",
		Image: midStart.Config.Image, CreatedAt: f.clk.Now(),
	}
	if err := st.CreateSandbox(ctx, row); err != nil {
		t.Fatal(err)
	}
	midStart, err := st.SetRuntimeState(ctx, midStart.ID, midStart.Version, store.RuntimeState{Status: store.RuntimeStarting, CurrentSandboxID: row.ID}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.env.Fake.Create(ctx, provider.Spec{
		SandboxID: row.ID, RuntimeID: midStart.ID, Instance: f.env.Instance, Image: "img",
		Workspace: midStart.WorkspaceVolume, Network: provider.NetworkNone,
	}); err != nil {
		t.Fatal(err)
	}

	// 2. Compute that vanished under a running row.
	vanished := f.started(t, "vanished", 600)
	_, vsb := f.get(t, vanished.ID)
	if !f.env.Fake.Vanish(vsb.ProviderSandboxID) {
		t.Fatal("vanish")
	}

	// 3. Compute that exited by itself.
	exited := f.started(t, "exited", 600)
	_, esb := f.get(t, exited.ID)
	if !f.env.Fake.Kill(esb.ProviderSandboxID, 137) {
		t.Fatal("kill")
	}

	// 4. Killed between the provider's pause and the ledger write: the
	// row says running, the compute is paused.
	halfPaused := f.started(t, "half-paused", 600)
	_, hsb := f.get(t, halfPaused.ID)
	if err := f.env.Fake.Pause(ctx, provider.Handle{Provider: "fake", ID: hsb.ProviderSandboxID}); err != nil {
		t.Fatal(err)
	}

	// 5. The reverse: the row says paused, the compute runs (unbilled).
	halfResumed := f.started(t, "half-resumed", 600)
	f.env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+halfResumed.ID+"/pause", nil)
	_, rsb := f.get(t, halfResumed.ID)
	if err := f.env.Fake.Resume(ctx, provider.Handle{Provider: "fake", ID: rsb.ProviderSandboxID}); err != nil {
		t.Fatal(err)
	}

	// 6. Compute with no row at all, and 7. a healthy runtime.
	orphan, err := f.env.Fake.Create(ctx, provider.Spec{
		SandboxID: uuid.NewString(), Instance: f.env.Instance, Image: "img", Workspace: "ws-orphan", Network: provider.NetworkNone,
	})
	if err != nil {
		t.Fatal(err)
	}
	healthy := f.started(t, "healthy", 600)

	rep, err := f.m.Reconcile(ctx)
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	want := map[string]runtime.Reconciliation{
		midStart.ID:    runtime.ReconcileInterrupted,
		vanished.ID:    runtime.ReconcileVanished,
		exited.ID:      runtime.ReconcileExited,
		halfPaused.ID:  runtime.ReconcileResumed,
		halfResumed.ID: runtime.ReconcileRepaused,
	}
	for id, what := range want {
		if rep.Reconciled[id] != what {
			t.Errorf("runtime %s: reconciled %q, want %q", id, rep.Reconciled[id], what)
		}
	}
	if _, ok := rep.Reconciled[healthy.ID]; ok {
		t.Errorf("healthy runtime was touched: %v", rep.Reconciled[healthy.ID])
	}
	if len(rep.Orphans) != 2 {
		t.Errorf("orphans removed = %+v, want the mid-start compute and the row-less one", rep.Orphans)
	}

	checks := []struct {
		id     string
		status store.RuntimeStatus
	}{
		{midStart.ID, store.RuntimeIdle},
		{vanished.ID, store.RuntimeError},
		{exited.ID, store.RuntimeError},
		{halfPaused.ID, store.RuntimeRunning},
		{halfResumed.ID, store.RuntimePaused},
		{healthy.ID, store.RuntimeRunning},
	}
	for _, c := range checks {
		if got, _ := f.get(t, c.id); got.Status != c.status {
			t.Errorf("runtime %s is %s, want %s", c.id, got.Status, c.status)
		}
	}
	for _, kill := range []struct{ id, reason string }{{row.ID, runtime.KillInterrupted}, {vsb.ID, runtime.KillVanished}, {esb.ID, runtime.KillExited}} {
		sb, err := st.GetSandbox(ctx, kill.id)
		if err != nil || sb.State != store.SandboxKilled || sb.KillReason != kill.reason {
			t.Errorf("row %s = %s/%s %v, want killed/%s", kill.id, sb.State, sb.KillReason, err, kill.reason)
		}
	}

	// Every live row has exactly its compute, in the row's state; nothing
	// else runs.
	live := map[string]provider.State{}
	for _, c := range f.env.Fake.Live() {
		live[c.Handle.ID] = c.Status.State
	}
	if _, ok := live[orphan.ID]; ok {
		t.Error("orphaned compute survived")
	}
	expect := map[string]provider.State{}
	for _, id := range []string{halfPaused.ID, halfResumed.ID, healthy.ID} {
		_, sb := f.get(t, id)
		expect[sb.ProviderSandboxID] = map[store.SandboxState]provider.State{store.SandboxRunning: provider.StateRunning, store.SandboxPaused: provider.StatePaused}[sb.State]
	}
	if len(live) != len(expect) {
		t.Errorf("live compute %v, want %v", live, expect)
	}
	for id, s := range expect {
		if live[id] != s {
			t.Errorf("compute %s is %q, want %q", id, live[id], s)
		}
	}

	// A second round finds nothing to do.
	rep, err = f.m.Reconcile(ctx)
	if err != nil || len(rep.Reconciled) != 0 || len(rep.Orphans) != 0 {
		t.Fatalf("second reconcile: %+v %v", rep, err)
	}
}

func TestTickReconcilesWhenDue(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rt := f.started(t, "p1", 600)
	_, sb := f.get(t, rt.ID)
	if _, err := f.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	f.env.Fake.Vanish(sb.ProviderSandboxID)
	f.clk.Advance(10 * time.Second)
	if rep, err := f.m.Tick(ctx, f.clk.Now()); err != nil || len(rep.Reconciled) != 0 {
		t.Fatalf("tick before reconcile is due: %+v %v", rep, err)
	}
	f.clk.Advance(time.Minute)
	rep, err := f.m.Tick(ctx, f.clk.Now())
	if err != nil || rep.Reconciled[rt.ID] != runtime.ReconcileVanished {
		t.Fatalf("tick when due: %+v %v", rep, err)
	}
}

// TestRoundAfterReconcileSweepsAgain: compute that shows up after a
// reconciliation listed the provider's (the engine finishing a create a
// killed server had asked for) is removed by the next round, not a
// reconciliation's interval later; the round after that does not list
// again.
func TestRoundAfterReconcileSweepsAgain(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	late, err := f.env.Fake.Create(ctx, provider.Spec{
		SandboxID: uuid.NewString(), Instance: f.env.Instance, Image: "img", Workspace: "ws-late", Network: provider.NetworkNone,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(5 * time.Second)
	rep, err := f.m.Tick(ctx, f.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Orphans) != 1 || rep.Orphans[0].ID != late.ID {
		t.Fatalf("the round after a reconciliation removed %+v, want the late compute %s", rep.Orphans, late.ID)
	}
	if _, err := f.env.Fake.Create(ctx, provider.Spec{
		SandboxID: uuid.NewString(), Instance: f.env.Instance, Image: "img", Workspace: "ws-later", Network: provider.NetworkNone,
	}); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(5 * time.Second)
	if rep, err = f.m.Tick(ctx, f.clk.Now()); err != nil || len(rep.Orphans) != 0 {
		t.Fatalf("the second round: %+v %v; want no sweep until the next reconciliation", rep, err)
	}
}
