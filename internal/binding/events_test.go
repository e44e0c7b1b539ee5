package binding_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// dialLog is a fake provider's agent that is never there: it records
// which sandbox (provider id) each dial was for and refuses it. An apply
// dials its sandbox's agent first, so a dial is an apply.
type dialLog struct {
	mu  sync.Mutex
	ids []string
}

func (d *dialLog) dial(_ context.Context, id string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ids = append(d.ids, id)
	return nil, errors.New("no agent here")
}

func (d *dialLog) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Compact(slices.Clone(d.ids))
}

// TestAppliedOnRunning: the binding service hears of every sandbox that
// begins to run through its subscription to the runtime service's events
// (a start, a resume) and applies the runtime's bindings to it; Wait
// covers a sandbox that began to run just before. Once the service is
// closed it hears nothing more.
func TestAppliedOnRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, st, agents, rts, bs, rt := newRig(t)
		// Installed while idle: nothing runs, nothing is applied.
		_, err := bs.Install(ctx, rt, binding.InstallRequest{Name: "repo-tools"})
		must(t, err)
		must(t, bs.Wait(ctx, rt.ID))
		if got := agents.dialed(); len(got) != 0 {
			t.Fatalf("an idle runtime's agent was dialed: %v", got)
		}

		rt, err = rts.Start(ctx, rt.ID, nil)
		must(t, err)
		must(t, bs.Wait(ctx, rt.ID)) // no synctest.Wait: Wait alone covers the start
		sb, err := st.GetSandbox(ctx, rt.CurrentSandboxID)
		must(t, err)
		if got := agents.dialed(); !slices.Equal(got, []string{sb.ProviderSandboxID}) {
			t.Fatalf("after a start, dialed %v; want the new sandbox %s", got, sb.ProviderSandboxID)
		}
		bound, err := bs.Bindings(ctx, rt)
		must(t, err)
		if len(bound) != 1 || binding.StatusOf(bound[0], sb.ID).State != binding.StatePending {
			t.Fatalf("bindings after an apply that found no agent: %+v", bound)
		}

		// A resumed sandbox is brought in line too.
		_, err = rts.Pause(ctx, rt.ID, store.PauseUser)
		must(t, err)
		agents.mu.Lock()
		agents.ids = nil
		agents.mu.Unlock()
		_, err = rts.Resume(ctx, rt.ID)
		must(t, err)
		must(t, bs.Wait(ctx, rt.ID))
		if got := agents.dialed(); !slices.Equal(got, []string{sb.ProviderSandboxID}) {
			t.Fatalf("after a resume, dialed %v", got)
		}

		// Closed: the next start is not heard.
		bs.Close()
		_, err = rts.Reset(ctx, rt.ID, false)
		must(t, err)
		agents.mu.Lock()
		agents.ids = nil
		agents.mu.Unlock()
		_, err = rts.Start(ctx, rt.ID, nil)
		must(t, err)
		synctest.Wait()
		if got := agents.dialed(); len(got) != 0 {
			t.Fatalf("a closed binding service applied: %v", got)
		}
	})
}

// newRig is a binding service over a runtime service, on a real SQLite
// store and the fake provider whose agent is never there (agents), with
// one idle runtime. Built in a synctest bubble, its clock is the
// bubble's.
func newRig(t *testing.T) (context.Context, store.Store, *dialLog, *runtime.Service, *binding.Service, store.Runtime) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	agents := &dialLog{}
	reg := provider.NewRegistry()
	reg.Register(fake.New(fake.Config{Agent: agents.dial}))
	rts := runtime.New(runtime.Config{Store: st, Providers: reg, Instance: "i", Defaults: runtime.Defaults{Image: "paddock/base:1"}})
	t.Cleanup(func() { rts.Close() })
	bs := binding.New(binding.Config{Store: st, Runtimes: rts})
	t.Cleanup(bs.Close)
	now := time.Now().UTC()
	org := store.Org{ID: "org-1", Name: "acme", CreatedAt: now}
	ws := store.Workspace{ID: "ws-1", OrgID: org.ID, Name: "dev", CreatedAt: now}
	must(t, st.CreateOrg(ctx, org))
	must(t, st.CreateWorkspace(ctx, ws))
	_, rt, err := rts.CreateProject(ctx, ws, "p", "", runtime.ConfigRequest{})
	must(t, err)
	return ctx, st, agents, rts, bs, rt
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestStatusFollowsTheSandboxes: a binding's status is what the last
// apply to the runtime's current sandbox recorded. A binding pinned to a
// version its source no longer has (a catalog version an upgrade dropped)
// fails on each sandbox that begins to run, naming the version; a runtime
// without a sandbox, and a binding changed since, are pending until the
// next apply.
func TestStatusFollowsTheSandboxes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, st, _, rts, bs, rt := newRig(t)
		b, err := bs.Install(ctx, rt, binding.InstallRequest{Name: "repo-tools", Source: binding.SourceCatalog})
		must(t, err)
		b.Version = "0.0.0-dropped"
		_, err = st.UpdateBinding(ctx, b)
		must(t, err)
		status := func(sandboxID string) binding.Status {
			t.Helper()
			bound, err := bs.Bindings(ctx, rt)
			must(t, err)
			if len(bound) != 1 {
				t.Fatalf("%d bindings", len(bound))
			}
			return binding.StatusOf(bound[0], sandboxID)
		}
		if got := status(""); got.State != binding.StatePending {
			t.Fatalf("before any sandbox: %+v", got)
		}

		for range 2 { // two sandboxes, one after the other
			rt, err = rts.Start(ctx, rt.ID, nil)
			must(t, err)
			must(t, bs.Wait(ctx, rt.ID))
			got := status(rt.CurrentSandboxID)
			if got.State != binding.StateFailed || got.SandboxID != rt.CurrentSandboxID || !strings.Contains(got.Error, "0.0.0-dropped") {
				t.Fatalf("on sandbox %s: %+v; want failed there, naming the version", rt.CurrentSandboxID, got)
			}
			rt, err = rts.Reset(ctx, rt.ID, false)
			must(t, err)
			if got := status(rt.CurrentSandboxID); got.State != binding.StatePending {
				t.Fatalf("after a reset: %+v", got)
			}
		}

		// Pinned to a version there is again, on a running sandbox: the
		// change is pending until an apply records it (this agent is
		// never there to take one).
		rt, err = rts.Start(ctx, rt.ID, nil)
		must(t, err)
		must(t, bs.Wait(ctx, rt.ID))
		latest, ok := capability.FromCatalog("repo-tools", "")
		if !ok {
			t.Fatal("the catalog has no repo-tools")
		}
		_, err = bs.Update(ctx, rt, b.ID, binding.UpdateRequest{Version: latest.Version})
		must(t, err)
		must(t, bs.Wait(ctx, rt.ID))
		if got := status(rt.CurrentSandboxID); got.State != binding.StatePending {
			t.Fatalf("re-pinned: %+v", got)
		}
	})
}
