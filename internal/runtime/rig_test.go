package runtime

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// rig is a runtime service on a real SQLite store and the fake provider,
// with one org and workspace. Built inside a synctest bubble, its clock is
// the bubble's: time.Sleep moves it.
type rig struct {
	t    *testing.T
	ctx  context.Context
	st   store.Store
	fake *fake.Provider
	s    *Service
	ws   store.Workspace
}

// rigOptions shape a rig.
type rigOptions struct {
	Fake      fake.Config
	Defaults  Defaults // Image "paddock/base:1" when empty
	WarmPools []WarmPool
	// Wrap, when set, is the provider the service uses around the fake
	// (a breaker).
	Wrap func(*fake.Provider) provider.Provider
	// Logger, when set, is the service's logger.
	Logger *slog.Logger
}

// newRig returns a rig whose fake provider has cfg and whose service has
// the defaults d (Image "paddock/base:1" when empty).
func newRig(t *testing.T, cfg fake.Config, d Defaults) *rig {
	t.Helper()
	return newRigWith(t, rigOptions{Fake: cfg, Defaults: d})
}

// newRigWith returns a rig shaped by o.
func newRigWith(t *testing.T, o rigOptions) *rig {
	t.Helper()
	cfg, d := o.Fake, o.Defaults
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	prov := fake.New(cfg)
	reg := provider.NewRegistry()
	if o.Wrap != nil {
		reg.Register(o.Wrap(prov))
	} else {
		reg.Register(prov)
	}
	if d.Image == "" {
		d.Image = "paddock/base:1"
	}
	s := New(Config{Store: st, Providers: reg, Instance: "i", Defaults: d, WarmPools: o.WarmPools, Logger: o.Logger})
	t.Cleanup(func() { s.Close() })
	now := time.Now().UTC()
	org := store.Org{ID: newID(), Name: "acme", CreatedAt: now}
	ws := store.Workspace{ID: newID(), OrgID: org.ID, Name: "dev", CreatedAt: now}
	if err := st.CreateOrg(ctx, org); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, ctx: ctx, st: st, fake: prov, s: s, ws: ws}
}

// project creates a project named name with req and returns its runtime.
func (r *rig) project(name string, req ConfigRequest) store.Runtime {
	r.t.Helper()
	_, rt, err := r.s.CreateProject(r.ctx, r.ws, name, "", req)
	if err != nil {
		r.t.Fatal(err)
	}
	return rt
}

// started creates a project named name with req and starts its runtime.
func (r *rig) started(name string, req ConfigRequest) store.Runtime {
	r.t.Helper()
	rt, err := r.s.Start(r.ctx, r.project(name, req).ID, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return rt
}

// get reads a runtime and its current sandbox (zero when it has none).
func (r *rig) get(id string) (store.Runtime, store.Sandbox) {
	r.t.Helper()
	rt, err := r.st.GetRuntime(r.ctx, id)
	if err != nil {
		r.t.Fatal(err)
	}
	var sb store.Sandbox
	if rt.CurrentSandboxID != "" {
		if sb, err = r.st.GetSandbox(r.ctx, rt.CurrentSandboxID); err != nil {
			r.t.Fatal(err)
		}
	}
	return rt, sb
}

func (r *rig) must(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}
