package runtime

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// twoServers is two runtime services, each with its own store handle on
// one SQLite file and one provider (as two servers on one Docker host
// share its compute), and a runtime they both serve.
type twoServers struct {
	a, b *Service
	st   store.Store // a's
	prov *fake.Provider
	rt   store.Runtime
}

func newTwoServers(t *testing.T) *twoServers {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "paddock.db")
	open := func() store.Store {
		st, err := sqlite.Open(ctx, path, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	ts := &twoServers{prov: fake.New(fake.Config{})}
	reg := provider.NewRegistry()
	reg.Register(ts.prov)
	svc := func(st store.Store) *Service {
		s := New(Config{Store: st, Providers: reg, Instance: "i", Defaults: Defaults{Image: "paddock/base:1"}})
		t.Cleanup(func() { s.Close() })
		return s
	}
	ts.st = open()
	ts.a, ts.b = svc(ts.st), svc(open())

	now := time.Now().UTC()
	org := store.Org{ID: newID(), Name: "acme", CreatedAt: now}
	ws := store.Workspace{ID: newID(), OrgID: org.ID, Name: "dev", CreatedAt: now}
	if err := ts.st.CreateOrg(ctx, org); err != nil {
		t.Fatal(err)
	}
	if err := ts.st.CreateWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	var err error
	if _, ts.rt, err = ts.a.CreateProject(ctx, ws, "p", "", ConfigRequest{}); err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestTwoServersOneDatabase: server A's start or pause is held in the
// provider while server B, on the same database, writes the same runtime.
// Each verb writes only its own columns, so B's port or configuration
// change and A's transition are both kept: A's stale write of the
// runtime's state is made again, since the state is as A read it. A write
// of B that moved the state (a reset) makes A lose: 409 runtime_busy,
// never the store's own *_version_conflict, and B's reset is kept.
func TestTwoServersOneDatabase(t *testing.T) {
	idle := int64(600)
	for _, tc := range []struct {
		name string
		op   string // A's action, held at this provider call
		race func(ctx context.Context, b *Service, id string) error
		busy bool
		want func(rt store.Runtime) bool
	}{
		{
			name: "a port marked public during a start", op: fake.OpCreate,
			race: func(ctx context.Context, b *Service, id string) error {
				_, err := b.SetPortPublic(ctx, id, 8080, true)
				return err
			},
			want: func(rt store.Runtime) bool {
				return rt.Status == store.RuntimeRunning && slices.Equal(rt.Config.PublicPorts, []int{8080})
			},
		},
		{
			name: "a configuration change during a start", op: fake.OpCreate,
			race: func(ctx context.Context, b *Service, id string) error {
				_, _, err := b.Configure(ctx, id, Patch{IdleTimeoutSeconds: &idle})
				return err
			},
			want: func(rt store.Runtime) bool {
				return rt.Status == store.RuntimeRunning && rt.Config.IdleTimeoutSeconds == idle
			},
		},
		{
			name: "a port marked public during a pause", op: fake.OpPause,
			race: func(ctx context.Context, b *Service, id string) error {
				_, err := b.SetPortPublic(ctx, id, 8080, true)
				return err
			},
			want: func(rt store.Runtime) bool {
				return rt.Status == store.RuntimePaused && slices.Equal(rt.Config.PublicPorts, []int{8080})
			},
		},
		{
			name: "a keepalive during a pause", op: fake.OpPause,
			race: func(ctx context.Context, b *Service, id string) error {
				_, err := b.Keepalive(ctx, id, time.Hour)
				return err
			},
			want: func(rt store.Runtime) bool { return rt.Status == store.RuntimePaused },
		},
		{
			name: "a reset during a pause", op: fake.OpPause,
			race: func(ctx context.Context, b *Service, id string) error { _, err := b.Reset(ctx, id, false); return err },
			busy: true,
			want: func(rt store.Runtime) bool { return rt.Status == store.RuntimeIdle && rt.CurrentSandboxID == "" },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ts := newTwoServers(t)
				err := ts.race(t, tc.op, tc.race)
				if pe, ok := errdefs.Public(err); tc.busy && (!ok || pe.Code != CodeBusy || errdefs.KindOf(err) != errdefs.ErrConflict) {
					t.Fatalf("A's losing action = %v; want 409 %s", err, CodeBusy)
				} else if !tc.busy && err != nil {
					t.Fatalf("A's action beside B's write: %v", err)
				}
				got, err := ts.st.GetRuntime(t.Context(), ts.rt.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !tc.want(got) {
					t.Fatalf("runtime after both: status %s, sandbox %q, config %+v", got.Status, got.CurrentSandboxID, got.Config)
				}
			})
		})
	}
}

// race runs A's action, a start (op create) or a pause of the running
// runtime (op pause), held at the provider's op while B's race runs,
// and returns A's error. It runs in a synctest bubble, where
// synctest.Wait tells when A is held.
func (ts *twoServers) race(t *testing.T, op string, race func(ctx context.Context, b *Service, id string) error) error {
	ctx := t.Context()
	act := func() error { _, err := ts.a.Start(ctx, ts.rt.ID, nil); return err }
	if op == fake.OpPause {
		if _, err := ts.a.Start(ctx, ts.rt.ID, nil); err != nil {
			t.Fatal(err)
		}
		act = func() error { _, err := ts.a.Pause(ctx, ts.rt.ID, store.PauseUser); return err }
	}
	gate := make(chan struct{})
	ts.prov.SetGate(op, gate)
	done := make(chan error, 1)
	go func() { done <- act() }()
	synctest.Wait()
	if ts.prov.Calls(op) != 1 {
		t.Fatalf("A's action is not held at the provider's %s", op)
	}
	if err := race(ctx, ts.b, ts.rt.ID); err != nil {
		t.Fatalf("B's write: %v", err)
	}
	close(gate)
	return <-done
}
