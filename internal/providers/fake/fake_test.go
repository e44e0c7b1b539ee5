package fake_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/provider/providertest"
	"github.com/paddockhq/paddock/internal/providers/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func spec(t *testing.T) provider.Spec {
	return provider.Spec{
		SandboxID: uuid.NewString(),
		RuntimeID: uuid.NewString(),
		OrgID:     uuid.NewString(),
		Instance:  "test-" + t.Name(),
		Image:     "paddock/test-busybox:latest",
		Resources: provider.Resources{CPUMillis: 500, MemoryMB: 64, PidsLimit: 64},
		Workspace: "ws-" + uuid.NewString(),
		Network:   provider.NetworkNone,
	}
}

func workspaceExists(_ *testing.T, p provider.Provider, name string) bool {
	return p.(*fake.Provider).HasWorkspace(name)
}

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		New:             func(*testing.T) provider.Provider { return fake.New(fake.Config{}) },
		Spec:            spec,
		WorkspaceExists: workspaceExists,
	})
}

// TestConformanceWithoutCapabilities runs the suite on a provider that can
// neither pause nor snapshot nor give a writable root, and has no agent:
// what it cannot do must fail with ErrNotImplemented, and the rest hold.
func TestConformanceWithoutCapabilities(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		New: func(*testing.T) provider.Provider {
			return fake.New(fake.Config{NoPause: true, NoSnapshot: true, NoWritableRoot: true})
		},
		Spec:            spec,
		WorkspaceExists: workspaceExists,
	})
}

// TestConformanceWithAgent runs the suite with Config.Agent dialing a real
// in-process agent server, and with every network policy offered.
func TestConformanceWithAgent(t *testing.T) {
	dial := startAgent(t)
	providertest.Run(t, providertest.Harness{
		New: func(*testing.T) provider.Provider {
			return fake.New(fake.Config{
				Agent:    func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) },
				Networks: []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen},
			})
		},
		Spec:            spec,
		WorkspaceExists: workspaceExists,
	})
}

// startAgent serves an agent stand-in (GET /healthz over HTTP/2
// cleartext, as paddock-shim answers) on a unix socket until the test ends
// and returns a dialer for it.
func startAgent(t *testing.T) func(context.Context) (net.Conn, error) {
	dir, err := os.MkdirTemp("", "pfk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	srv := &http.Server{Handler: mux, Protocols: &protos, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("agent server close: %v", err)
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("agent server: %v", err)
		}
	})
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}
}

func TestFailNext(t *testing.T) {
	ctx := t.Context()
	boom := errdefs.Unavailable("engine_down", "the engine is down")
	tests := []struct {
		op   string
		call func(p *fake.Provider, h provider.Handle) error
	}{
		{fake.OpCreate, func(p *fake.Provider, _ provider.Handle) error { _, err := p.Create(ctx, spec(t)); return err }},
		{fake.OpStart, func(p *fake.Provider, h provider.Handle) error { return p.Start(ctx, h) }},
		{fake.OpPause, func(p *fake.Provider, h provider.Handle) error { return p.Pause(ctx, h) }},
		{fake.OpResume, func(p *fake.Provider, h provider.Handle) error { return p.Resume(ctx, h) }},
		{fake.OpDestroy, func(p *fake.Provider, h provider.Handle) error { return p.Destroy(ctx, h) }},
		{fake.OpInspect, func(p *fake.Provider, h provider.Handle) error { _, err := p.Inspect(ctx, h); return err }},
		{fake.OpList, func(p *fake.Provider, _ provider.Handle) error { _, err := p.List(ctx, "i"); return err }},
		{fake.OpRemoveWorkspace, func(p *fake.Provider, _ provider.Handle) error { return p.RemoveWorkspace(ctx, "ws-x") }},
		{fake.OpSnapshot, func(p *fake.Provider, h provider.Handle) error { _, err := p.Snapshot(ctx, h, nil); return err }},
		{fake.OpRemoveSnapshot, func(p *fake.Provider, _ provider.Handle) error { return p.RemoveSnapshot(ctx, "fake-archive:1") }},
	}
	for _, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			p := fake.New(fake.Config{})
			h, err := p.Create(ctx, spec(t))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Start(ctx, h); err != nil {
				t.Fatal(err)
			}
			before := p.Live()

			p.FailNext(tc.op, boom)
			p.FailNext(tc.op, boom)
			for i := range 2 {
				if err := tc.call(p, h); !errors.Is(err, boom) {
					t.Fatalf("call %d = %v, want the injected error", i+1, err)
				}
			}
			if got := p.Live(); len(got) != len(before) || got[0].Status.State != before[0].Status.State {
				t.Fatalf("a failed %s changed the compute: %+v -> %+v", tc.op, before, got)
			}
			if err := tc.call(p, h); err != nil {
				t.Fatalf("call after the failures = %v", err)
			}
			if n := p.Calls(tc.op); n < 3 {
				t.Fatalf("Calls(%s) = %d, want at least 3", tc.op, n)
			}
		})
	}
}

func TestCreateFailureLeavesNothing(t *testing.T) {
	p := fake.New(fake.Config{})
	p.FailNext(fake.OpCreate, errdefs.Unavailable("engine_down", "down"))
	s := spec(t)
	if _, err := p.Create(t.Context(), s); err == nil {
		t.Fatal("Create succeeded")
	}
	if p.Count() != 0 || p.HasWorkspace(s.Workspace) {
		t.Fatalf("a failed create left compute %d or workspace %v", p.Count(), p.Workspaces())
	}
}

// TestGate holds creates open to prove callers can observe and release
// them, and that a held call honours its ctx.
func TestGate(t *testing.T) { synctest.Test(t, testGate) }

// testGate is TestGate in a synctest bubble, where synctest.Wait tells
// when every caller is held.
func testGate(t *testing.T) {
	p := fake.New(fake.Config{})
	gate := make(chan struct{})
	p.SetCreateGate(gate)

	const n = 3
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := p.Create(t.Context(), spec(t))
			errs <- err
		})
	}
	synctest.Wait() // every create is held at the gate
	if c := p.Calls(fake.OpCreate); c != n {
		t.Fatalf("%d creates reached the gate, want %d", c, n)
	}
	if c := p.Count(); c != 0 {
		t.Fatalf("compute exists while creates are held: %d", c)
	}
	gate <- struct{}{} // release one
	synctest.Wait()
	if c := p.Count(); c != 1 {
		t.Fatalf("Count after one release = %d, want 1", c)
	}
	close(gate) // release the rest
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if c := p.Count(); c != n {
		t.Fatalf("Count = %d, want %d", c, n)
	}

	// A held call returns when its ctx is done.
	p.SetCreateGate(make(chan struct{}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.Create(ctx, spec(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("held Create with a cancelled ctx = %v", err)
	}
	p.SetCreateGate(nil)
	if _, err := p.Create(t.Context(), spec(t)); err != nil {
		t.Fatalf("Create after the gate was removed: %v", err)
	}
}

func TestKillAndVanish(t *testing.T) {
	ctx := t.Context()
	p := fake.New(fake.Config{})
	h, err := p.Create(ctx, spec(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, h); err != nil {
		t.Fatal(err)
	}
	if !p.Kill(h.ID, 137) {
		t.Fatal("Kill did not find the compute")
	}
	st, err := p.Inspect(ctx, h)
	if err != nil || st.State != provider.StateStopped || st.ExitCode != 137 {
		t.Fatalf("after Kill: %+v, %v", st, err)
	}
	if !p.Vanish(h.ID) || p.Count() != 0 {
		t.Fatal("Vanish did not remove the compute")
	}
	if _, err := p.Inspect(ctx, h); !errdefs.IsNotFound(err) {
		t.Fatalf("Inspect after Vanish = %v, want not found", err)
	}
	if p.Kill(h.ID, 1) || p.Vanish(h.ID) {
		t.Fatal("Kill or Vanish found vanished compute")
	}
}

func TestImages(t *testing.T) {
	p := fake.New(fake.Config{Images: []string{"present:1"}})
	s := spec(t)
	s.Image = "missing:1"
	_, err := p.Create(t.Context(), s)
	pe, ok := errdefs.Public(err)
	if !ok || !errors.Is(err, errdefs.ErrFailedPrecondition) || pe.Code != fake.CodeImageNotFound {
		t.Fatalf("Create with a missing image = %v, want failed precondition image_not_found", err)
	}
	if p.Count() != 0 || p.HasWorkspace(s.Workspace) {
		t.Fatal("a missing image left something behind")
	}
	s.Image = "present:1"
	if _, err := p.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
}

func TestLiveIsASnapshot(t *testing.T) {
	p := fake.New(fake.Config{Instance: "inst"})
	s := spec(t)
	s.Instance = "" // taken from the config
	s.Labels = map[string]string{"k": "v", provider.LabelManaged: "false"}
	if _, err := p.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	live := p.Live()
	if len(live) != 1 {
		t.Fatalf("Live = %d entries", len(live))
	}
	c := live[0]
	if c.Labels[provider.LabelInstance] != "inst" || c.Labels[provider.LabelManaged] != "true" || c.Labels["k"] != "v" {
		t.Fatalf("labels = %v", c.Labels)
	}
	c.Labels["k"] = "changed"
	if p.Live()[0].Labels["k"] != "v" {
		t.Fatal("Live shares its maps with the provider")
	}
}

func TestAgentNotImplementedByDefault(t *testing.T) {
	p := fake.New(fake.Config{})
	if p.Capabilities().Agent {
		t.Fatal("Agent capability without Config.Agent")
	}
	h, err := p.Create(t.Context(), spec(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DialAgent(t.Context(), h); !errors.Is(err, errdefs.ErrNotImplemented) {
		t.Fatalf("DialAgent = %v, want not implemented", err)
	}
}

// TestSnapshots checks what the fake records for a snapshot, and that a
// snapshot in use is untagged, then deleted by a later RemoveSnapshot once
// nothing uses it.
func TestSnapshots(t *testing.T) {
	ctx := t.Context()
	p := fake.New(fake.Config{Images: []string{"paddock/test-busybox:latest"}})
	s := spec(t)
	h, err := p.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, h); err != nil {
		t.Fatal(err)
	}
	ref, err := p.Snapshot(ctx, h, map[string]string{provider.LabelInstance: "archive", "k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	got := p.Snapshots()
	if len(got) != 1 {
		t.Fatalf("Snapshots = %+v, want one", got)
	}
	sn := got[0]
	if sn.Ref != ref || sn.Source != h.ID || sn.SandboxID != s.SandboxID || sn.Image != s.Image || sn.State != provider.StateRunning || !sn.Tagged {
		t.Fatalf("snapshot = %+v", sn)
	}
	if sn.Labels[provider.LabelInstance] != "archive" || sn.Labels["k"] != "v" || sn.Labels[provider.LabelSandbox] != s.SandboxID {
		t.Fatalf("snapshot labels = %v, want the given ones over the compute's", sn.Labels)
	}
	sn.Labels["k"] = "changed"
	if p.Snapshots()[0].Labels["k"] != "v" {
		t.Fatal("Snapshots shares its maps with the provider")
	}
	if _, err := p.Snapshot(ctx, h, map[string]string{"": "x"}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("Snapshot with an empty label key = %v, want invalid argument", err)
	}

	// A snapshot is an image only while it is tagged, even with Images set.
	restored := spec(t)
	restored.Image = ref
	restored.RuntimeID = s.RuntimeID
	user, err := p.Create(ctx, restored)
	if err != nil {
		t.Fatalf("Create from a snapshot: %v", err)
	}
	if err := p.RemoveSnapshot(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if got := p.Snapshots(); len(got) != 1 || got[0].Tagged {
		t.Fatalf("after RemoveSnapshot in use, Snapshots = %+v, want one untagged", got)
	}
	if _, err := p.Create(ctx, restored); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("Create from an untagged snapshot = %v, want failed precondition", err)
	}
	if err := p.Destroy(ctx, user); err != nil {
		t.Fatal(err)
	}
	if err := p.RemoveSnapshot(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if got := p.Snapshots(); len(got) != 0 {
		t.Fatalf("after the last RemoveSnapshot, Snapshots = %+v", got)
	}
	for _, bad := range []string{"fake-archive:0", "fake-archive:x", "fake-archive:", "paddock/archive:1"} {
		if err := p.RemoveSnapshot(ctx, bad); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("RemoveSnapshot(%q) = %v, want invalid argument", bad, err)
		}
	}
}
