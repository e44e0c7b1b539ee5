package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/lifecycle"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

func newClock() *testenv.Clock { return testenv.NewClock(time.Now().UTC()) }

// lifeEnv is the API on Docker with an injected clock, a lifecycle manager
// on the same clock (ticked by hand) and the SDK.
type lifeEnv struct {
	env   *servertest.Env
	clock *testenv.Clock
	life  *lifecycle.Manager
	sdk   *pc.Client
}

func newLifeEnv(t testing.TB, opts servertest.Options) *lifeEnv {
	t.Helper()
	instance := testenv.Instance(t)
	c := newClock()
	opts.Provider = testenv.DockerProvider(t, instance)
	opts.Instance = instance
	opts.Image = testenv.TestImage
	opts.Now = c.Now
	if _, bench := t.(*testing.B); bench {
		opts.NoSpecCheck = true // time what the server does, not the test's OpenAPI check
	}
	env := servertest.New(t, opts)
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	sdk, err := pc.New(env.URL, env.Key, pc.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	life := lifecycle.New(lifecycle.Config{Store: env.Store, Runtimes: env.Runtimes, Now: c.Now, ReconcileEvery: time.Hour})
	return &lifeEnv{env: env, clock: c, life: life, sdk: sdk}
}

// project creates a project with cfg (small resources unless set) and
// returns its runtime id.
func (e *lifeEnv) project(t testing.TB, name string, cfg pc.RuntimeConfig) string {
	t.Helper()
	if cfg.CPUMillis == 0 {
		cfg.CPUMillis, cfg.MemoryMB, cfg.PidsLimit = 500, 128, 64
	}
	var p pc.Project
	e.env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{Name: name, Runtime: &cfg}).Decode(t, &p)
	return p.RuntimeID
}

func rtPath(rid string) string { return "/api/v1/org/acme/ws/dev/runtimes/" + rid }

func (e *lifeEnv) runtime(t *testing.T, rid string) pc.Runtime {
	t.Helper()
	var rt pc.Runtime
	e.env.Must(t, 200, "GET", rtPath(rid), nil).Decode(t, &rt)
	return rt
}

func (e *lifeEnv) row(t *testing.T, id string) pc.Sandbox {
	t.Helper()
	var sb pc.Sandbox
	e.env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+id, nil).Decode(t, &sb)
	return sb
}

// rows lists the runtime's ledger rows, newest first.
func (e *lifeEnv) rows(t *testing.T, rid string) []pc.Sandbox {
	t.Helper()
	var l pc.List[pc.Sandbox]
	e.env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?runtime_id="+rid, nil).Decode(t, &l)
	return l.Items
}

func (e *lifeEnv) exec(t testing.TB, rid string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := e.sdk.Exec(ctx, "acme", "dev", rid, pc.ExecRequest{Argv: argv})
	if err != nil {
		t.Fatalf("exec %q: %v", argv, err)
	}
	if res.Exit == nil || res.Exit.Code != 0 {
		t.Fatalf("exec %q: exit %+v, stderr %q", argv, res.Exit, res.Stderr)
	}
	return string(res.Stdout)
}

// tick runs one lifecycle round at the clock's time.
func (e *lifeEnv) tick(t *testing.T) lifecycle.Report {
	t.Helper()
	rep, err := e.life.Tick(t.Context(), e.clock.Now())
	if err != nil {
		t.Fatalf("lifecycle round: %v", err)
	}
	return rep
}

func (e *lifeEnv) wantStatus(t *testing.T, rid, want string) pc.Runtime {
	t.Helper()
	rt := e.runtime(t, rid)
	if rt.Status != want {
		t.Fatalf("runtime status %s (%s), want %s", rt.Status, rt.StatusReason, want)
	}
	return rt
}

// TestActivityExtendsExpiry checks that operations in a sandbox, and a
// stream the client stays attached to, keep it from expiring, and that it
// is paused with reason timeout once it has been idle for its timeout.
func TestActivityExtendsExpiry(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	e := newLifeEnv(t, servertest.Options{})
	rid := e.project(t, "p", pc.RuntimeConfig{IdleTimeoutSeconds: 60})
	var rt pc.Runtime
	e.env.Must(t, 200, "POST", rtPath(rid)+"/start", nil).Decode(t, &rt)
	first := *e.row(t, rt.CurrentSandboxID).ExpiresAt

	// Activity at 50s moves the window to 110s.
	e.clock.Advance(50 * time.Second)
	e.exec(t, rid, "true")
	e.clock.Advance(30 * time.Second) // 80s: past the first window
	if rep := e.tick(t); len(rep.Expired) != 0 {
		t.Fatalf("paused at 80s despite activity at 50s: %v", rep.Expired)
	}
	e.wantStatus(t, rid, pc.RuntimeRunning)
	if got := *e.row(t, rt.CurrentSandboxID).ExpiresAt; !got.After(first) {
		t.Fatalf("expires_at %v did not move past %v with activity", got, first)
	}

	// An attached stream holds it open however long it runs.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stream, err := e.sdk.ExecStream(ctx, "acme", "dev", rid, pc.ExecRequest{Argv: []string{"sleep", "600"}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(10 * time.Minute)
	if rep := e.tick(t); len(rep.Expired) != 0 {
		t.Fatal("paused while a client was attached to an exec stream")
	}
	cancel()
	_ = stream.Close()
	// The hold ends when the server sees the request end.
	testenv.WaitFor(t, "the expiry after the stream ended", func() bool {
		e.clock.Advance(61 * time.Second)
		return slices.Contains(e.tick(t).Expired, rid)
	})
	rt = e.wantStatus(t, rid, pc.RuntimePaused)
	if row := e.row(t, rt.CurrentSandboxID); row.State != "paused" || row.PauseReason != "timeout" {
		t.Fatalf("row %s pause_reason %q, want paused timeout", row.State, row.PauseReason)
	}
}

// TestMaxLifetimePauses checks that a maximum lifetime pauses a sandbox
// however busy it is, and caps keepalive.
func TestMaxLifetimePauses(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	e := newLifeEnv(t, servertest.Options{})
	rid := e.project(t, "p", pc.RuntimeConfig{IdleTimeoutSeconds: 60, MaxLifetimeSeconds: 100})
	var rt pc.Runtime
	e.env.Must(t, 200, "POST", rtPath(rid)+"/start", nil).Decode(t, &rt)
	start := e.clock.Now()
	e.env.Must(t, 200, "POST", rtPath(rid)+"/keepalive", pc.KeepaliveRequest{DurationSeconds: 3600})
	if exp := *e.row(t, rt.CurrentSandboxID).ExpiresAt; exp.After(start.Add(100 * time.Second)) {
		t.Fatalf("keepalive moved expiry to %v, past the max lifetime", exp)
	}
	for range 3 {
		e.clock.Advance(30 * time.Second)
		e.exec(t, rid, "true")
	}
	e.clock.Advance(11 * time.Second) // 101s, active 11s ago
	if rep := e.tick(t); !slices.Contains(rep.Expired, rid) {
		t.Fatal("not paused past its max lifetime")
	}
	e.wantStatus(t, rid, pc.RuntimePaused)
}

// TestWakeOnOperation checks that operations on a paused runtime resume it
// once, however many arrive together, and then run.
func TestWakeOnOperation(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	e := newLifeEnv(t, servertest.Options{})
	rid := e.project(t, "p", pc.RuntimeConfig{})
	var rt pc.Runtime
	e.env.Must(t, 200, "POST", rtPath(rid)+"/start", nil).Decode(t, &rt)
	e.exec(t, rid, "sh", "-c", "echo kept > /tmp/state")
	e.env.Must(t, 200, "POST", rtPath(rid)+"/pause", nil)

	const n = 8
	var wg sync.WaitGroup
	outs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.sdk.Exec(t.Context(), "acme", "dev", rid, pc.ExecRequest{Argv: []string{"cat", "/tmp/state"}})
			outs[i], errs[i] = string(res.Stdout), err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || outs[i] != "kept\n" {
			t.Fatalf("exec %d on a paused runtime: %q, %v", i, outs[i], errs[i])
		}
	}
	after := e.wantStatus(t, rid, pc.RuntimeRunning)
	if after.CurrentSandboxID != rt.CurrentSandboxID {
		t.Fatal("waking replaced the sandbox")
	}
	if rows := e.rows(t, rid); len(rows) != 1 || rows[0].State != "running" {
		t.Fatalf("ledger after concurrent wakes: %d rows, want the one, running", len(rows))
	}
	// Files wake it too.
	e.env.Must(t, 200, "POST", rtPath(rid)+"/pause", nil)
	r, err := e.sdk.ReadFile(t.Context(), "acme", "dev", rid, "/tmp/state")
	if err != nil {
		t.Fatalf("read a file on a paused runtime: %v", err)
	}
	_ = r.Close()
	e.wantStatus(t, rid, pc.RuntimeRunning)
}

// TestArchiveAndRestore checks that a runtime paused past its archive
// threshold is archived — snapshot taken, compute released, row killed —
// and that the next operation restores it with its files as they were.
func TestArchiveAndRestore(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	e := newLifeEnv(t, servertest.Options{})
	docker := testenv.DockerClient(t)
	rid := e.project(t, "p", pc.RuntimeConfig{ArchiveAfterSeconds: 3600})
	var rt pc.Runtime
	e.env.Must(t, 200, "POST", rtPath(rid)+"/start", nil).Decode(t, &rt)
	first := rt.CurrentSandboxID
	e.exec(t, rid, "sh", "-c", "mkdir -p /workspace/src && echo 'work in progress' > /workspace/src/notes.txt")
	e.env.Must(t, 200, "POST", rtPath(rid)+"/pause", nil)

	e.clock.Advance(59 * time.Minute)
	if rep := e.tick(t); len(rep.Archived) != 0 {
		t.Fatal("archived before its threshold")
	}
	e.clock.Advance(2 * time.Minute)
	if rep := e.tick(t); !slices.Contains(rep.Archived, rid) {
		t.Fatalf("not archived past its threshold: %+v", rep)
	}
	rt = e.wantStatus(t, rid, pc.RuntimeArchived)
	if rt.CurrentSandboxID != "" {
		t.Fatal("an archived runtime still points at a sandbox")
	}
	if row := e.row(t, first); row.State != "killed" || row.KillReason != runtime.KillArchived {
		t.Fatalf("archived row: %s %q, want killed archived", row.State, row.KillReason)
	}
	if cs := containersOf(t, docker, rid); len(cs) != 0 {
		t.Fatalf("%d containers left after archive", len(cs))
	}
	stored, err := e.env.Store.GetRuntime(t.Context(), rid)
	if err != nil || stored.Snapshot == "" {
		t.Fatalf("archived runtime has no snapshot: %q, %v", stored.Snapshot, err)
	}

	// Keepalive needs a sandbox; an exec restores one.
	if code := e.env.Do(t, "POST", rtPath(rid)+"/keepalive", nil).Code(); code != runtime.CodeNoSandbox {
		t.Fatalf("keepalive on an archived runtime: %s", code)
	}
	if got := e.exec(t, rid, "cat", "/workspace/src/notes.txt"); got != "work in progress\n" {
		t.Fatalf("file after restore: %q", got)
	}
	rt = e.wantStatus(t, rid, pc.RuntimeRunning)
	row := e.row(t, rt.CurrentSandboxID)
	if row.Image != stored.Snapshot || row.State != "running" {
		t.Fatalf("restored row runs %q (%s), want the snapshot %q", row.Image, row.State, stored.Snapshot)
	}
	if cs := containersOf(t, docker, rid); len(cs) != 1 {
		t.Fatalf("%d containers after restore, want 1", len(cs))
	}

	// Reset forgets the snapshot: the next start is clean, the workspace kept.
	e.env.Must(t, 200, "POST", rtPath(rid)+"/reset", nil)
	if stored, _ := e.env.Store.GetRuntime(t.Context(), rid); stored.Snapshot != "" {
		t.Fatalf("reset kept snapshot %q", stored.Snapshot)
	}
	if _, err := docker.ImageInspect(t.Context(), row.Image); err == nil {
		t.Fatalf("snapshot image %s outlived the reset", row.Image)
	}
}

// TestWarmPool checks that a start claims a warm sandbox (no create), that
// racing starts never share one, that warm compute bills nobody until it
// is claimed, and that the pool refills.
func TestWarmPool(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	const size = 2
	e := newLifeEnv(t, servertest.Options{
		WarmPools: []runtime.WarmPool{{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64, Size: size}},
	})
	ctx := t.Context()
	made, err := e.env.Runtimes.FillWarmPools(ctx)
	if err != nil || made != size {
		t.Fatalf("FillWarmPools = %d, %v; want %d", made, err, size)
	}
	warm, err := e.env.Store.ListWarmSandboxes(ctx)
	if err != nil || len(warm) != size {
		t.Fatalf("warm sandboxes: %d, %v", len(warm), err)
	}
	warmIDs := map[string]bool{}
	for _, w := range warm {
		warmIDs[w.ID] = true
	}
	var acct pc.CreditAccount
	e.env.Must(t, 200, "GET", "/api/v1/org/acme/credits", nil).Decode(t, &acct)

	// Four starts race for two warm sandboxes.
	const starts = 4
	rids := make([]string, starts)
	for i := range starts {
		rids[i] = e.project(t, fmt.Sprintf("p%d", i), pc.RuntimeConfig{})
	}
	// A project of another template never gets a warm one.
	other := e.project(t, "big", pc.RuntimeConfig{CPUMillis: 1000, MemoryMB: 256, PidsLimit: 64})
	var wg sync.WaitGroup
	resps := make([]servertest.Response, starts+1)
	for i, rid := range append(slices.Clone(rids), other) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps[i] = e.env.Do(t, "POST", rtPath(rid)+"/start", nil)
		}()
	}
	wg.Wait()
	claimed := map[string]bool{}
	for i, resp := range resps {
		if resp.Status != 200 {
			t.Fatalf("start %d: %d %s", i, resp.Status, resp.Body)
		}
		var rt pc.Runtime
		resp.Decode(t, &rt)
		if rt.Status != pc.RuntimeRunning {
			t.Fatalf("start %d: %s", i, rt.Status)
		}
		if warmIDs[rt.CurrentSandboxID] {
			if claimed[rt.CurrentSandboxID] {
				t.Fatalf("warm sandbox %s handed out twice", rt.CurrentSandboxID)
			}
			claimed[rt.CurrentSandboxID] = true
			if i == starts {
				t.Fatal("a runtime of another template claimed a warm sandbox")
			}
		}
	}
	if len(claimed) != size {
		t.Fatalf("%d warm sandboxes claimed, want %d", len(claimed), size)
	}
	for _, rid := range append(rids, other) {
		if out := e.exec(t, rid, "sh", "-c", "echo ok > /workspace/f && cat /workspace/f"); out != "ok\n" {
			t.Fatalf("exec in %s: %q", rid, out)
		}
	}
	if left, _ := e.env.Store.ListWarmSandboxes(ctx); len(left) != 0 {
		t.Fatalf("%d warm sandboxes left after the claims", len(left))
	}

	// Refill; then the warm compute is not billed: the org's journal
	// names only claimed sandboxes.
	if made, err := e.env.Runtimes.FillWarmPools(ctx); err != nil || made != size {
		t.Fatalf("refill = %d, %v", made, err)
	}
	refilled, _ := e.env.Store.ListWarmSandboxes(ctx)
	var journal pc.List[pc.CreditEntry]
	e.env.Must(t, 200, "GET", "/api/v1/org/acme/credits/journal?limit=500", nil).Decode(t, &journal)
	for _, w := range refilled {
		for _, j := range journal.Items {
			if j.SandboxID == w.ID {
				t.Fatalf("warm sandbox %s was billed before a claim: %+v", w.ID, j)
			}
		}
	}

	// A restart's reconciliation keeps healthy warm sandboxes and drops
	// those whose compute is gone.
	victim := refilled[0]
	h := provider.Handle{Provider: victim.Provider, ID: victim.ProviderSandboxID, State: victim.ProviderState}
	if err := e.env.Provider.Destroy(ctx, h); err != nil {
		t.Fatal(err)
	}
	if rep, err := e.life.Reconcile(ctx); err != nil || rep.WarmDiscarded != 1 || len(rep.Orphans) != 0 {
		t.Fatalf("reconcile: %+v, %v; want one warm sandbox discarded, no orphans", rep, err)
	}
	if left, _ := e.env.Store.ListWarmSandboxes(ctx); len(left) != size-1 {
		t.Fatalf("%d warm sandboxes after reconciling, want %d", len(left), size-1)
	}
}
