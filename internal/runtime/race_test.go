package runtime

import (
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// TestTwoServersOneDatabase: two runtime services, each with its own
// store handle on one SQLite file, act on one runtime at once. The one
// that loses the optimistic race answers 409 runtime_busy, never the
// store's own *_version_conflict.
func TestTwoServersOneDatabase(t *testing.T) { synctest.Test(t, testTwoServersOneDatabase) }

// testTwoServersOneDatabase is TestTwoServersOneDatabase in a synctest
// bubble, where synctest.Wait tells when the pause is held at the
// provider.
func testTwoServersOneDatabase(t *testing.T) {
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
	// One provider, as two servers on one Docker host share its compute.
	prov := fake.New(fake.Config{})
	reg := provider.NewRegistry()
	reg.Register(prov)
	svc := func(st store.Store) *Service {
		s := New(Config{Store: st, Providers: reg, Instance: "i", Defaults: Defaults{Image: "paddock/base:1"}})
		t.Cleanup(func() { s.Close() })
		return s
	}
	stA := open()
	a, b := svc(stA), svc(open())

	now := time.Now().UTC()
	org := store.Org{ID: newID(), Name: "acme", CreatedAt: now}
	ws := store.Workspace{ID: newID(), OrgID: org.ID, Name: "dev", CreatedAt: now}
	if err := stA.CreateOrg(ctx, org); err != nil {
		t.Fatal(err)
	}
	if err := stA.CreateWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	_, rt, err := a.CreateProject(ctx, ws, "p", "", ConfigRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Start(ctx, rt.ID, nil); err != nil {
		t.Fatal(err)
	}

	// A pauses; its provider call is held while B extends the same
	// sandbox's window, so A's write finds the rows changed under it.
	gate := make(chan struct{})
	prov.SetGate(fake.OpPause, gate)
	done := make(chan error, 1)
	go func() {
		_, err := a.Pause(ctx, rt.ID, store.PauseUser)
		done <- err
	}()
	synctest.Wait()
	if prov.Calls(fake.OpPause) == 0 {
		t.Fatal("the pause never reached the provider")
	}
	if _, err := b.Keepalive(ctx, rt.ID, time.Hour); err != nil {
		t.Fatalf("keepalive on the second server: %v", err)
	}
	close(gate)
	err = <-done
	pe, ok := errdefs.Public(err)
	if !ok || pe.Code != CodeBusy || !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("the losing pause = %v; want 409 %s", err, CodeBusy)
	}
	if errdefs.KindOf(err) != errdefs.ErrConflict {
		t.Fatalf("kind = %v", errdefs.KindOf(err))
	}
}
