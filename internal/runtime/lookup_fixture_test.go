package runtime

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// lookupFixture is a runtime service on a real SQLite store and the fake
// provider, with one org and two workspaces.
type lookupFixture struct {
	svc  *Service
	st   store.Store
	prov *fake.Provider
	org  store.Org
	ws   store.Workspace
	ws2  store.Workspace
}

func newLookupFixture(t *testing.T) *lookupFixture {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &lookupFixture{st: st, prov: fake.New(fake.Config{})}
	reg := provider.NewRegistry()
	reg.Register(f.prov)
	f.svc = New(Config{Store: st, Providers: reg, Instance: "i", Defaults: Defaults{Image: "paddock/base:1"}})
	t.Cleanup(func() { f.svc.Close() })
	now := time.Now().UTC()
	f.org = store.Org{ID: newID(), Name: "acme", CreatedAt: now}
	f.ws = store.Workspace{ID: newID(), OrgID: f.org.ID, Name: "dev", CreatedAt: now}
	f.ws2 = store.Workspace{ID: newID(), OrgID: f.org.ID, Name: "ops", CreatedAt: now}
	if err := st.CreateOrg(ctx, f.org); err != nil {
		t.Fatal(err)
	}
	for _, ws := range []store.Workspace{f.ws, f.ws2} {
		if err := st.CreateWorkspace(ctx, ws); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// project creates a project named name in ws and returns its runtime.
func (f *lookupFixture) project(t *testing.T, ws store.Workspace, name string) store.Runtime {
	t.Helper()
	_, rt, err := f.svc.CreateProject(t.Context(), ws, name, "", ConfigRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}
