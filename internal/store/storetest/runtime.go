package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

func testRuntimes(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)
	p := f.project(w)
	r := f.runtimeFor(p)
	r.StatusReason = "not really"
	r.CurrentSandboxID = uuid.NewString()
	r.Version = 42 // ignored: a new runtime is at version 1
	must(t, s.CreateRuntime(ctx, r))
	r.Version = 1

	t.Run("get", func(t *testing.T) {
		got, err := s.GetRuntime(ctx, r.ID)
		must(t, err)
		equal(t, "GetRuntime", got, normRuntime(r))
		got, err = s.GetRuntimeByProject(ctx, p.ID)
		must(t, err)
		equal(t, "GetRuntimeByProject", got, normRuntime(r))
	})

	t.Run("find by id prefix", func(t *testing.T) { testFindRuntimesByIDPrefix(t, f, r) })

	t.Run("not found", func(t *testing.T) {
		_, err := s.GetRuntime(ctx, uuid.NewString())
		wantKind(t, err, errdefs.ErrNotFound)
		_, err = s.GetRuntimeByProject(ctx, uuid.NewString())
		wantKind(t, err, errdefs.ErrNotFound)
	})

	other := f.project(w)
	creates := []struct {
		name    string
		edit    func(*store.Runtime)
		wantErr error
	}{
		{"second runtime for a project", func(x *store.Runtime) { x.ProjectID = p.ID }, errdefs.ErrConflict},
		{"duplicate id", func(x *store.Runtime) { x.ID = r.ID }, errdefs.ErrConflict},
		{"unknown project", func(x *store.Runtime) { x.ProjectID = uuid.NewString() }, errdefs.ErrFailedPrecondition},
		{"missing id", func(x *store.Runtime) { x.ID = "" }, errdefs.ErrInvalidArgument},
		{"missing project", func(x *store.Runtime) { x.ProjectID = "" }, errdefs.ErrInvalidArgument},
		{"missing status", func(x *store.Runtime) { x.Status = "" }, errdefs.ErrInvalidArgument},
		{"zero times", func(x *store.Runtime) { x.CreatedAt, x.UpdatedAt = time.Time{}, time.Time{} }, nil},
	}
	for _, tc := range creates {
		t.Run("create "+tc.name, func(t *testing.T) {
			x := f.runtimeFor(other)
			tc.edit(&x)
			wantKind(t, s.CreateRuntime(ctx, x), tc.wantErr)
			if tc.wantErr != nil {
				return
			}
			got, err := s.GetRuntime(ctx, x.ID)
			must(t, err)
			if got.CreatedAt.IsZero() || !got.UpdatedAt.Equal(got.CreatedAt) {
				t.Fatalf("CreatedAt=%v UpdatedAt=%v; want both set and equal", got.CreatedAt, got.UpdatedAt)
			}
		})
	}

	t.Run("list", func(t *testing.T) { testListRuntimes(t, f, o) })

	t.Run("delete", func(t *testing.T) {
		x := f.runtime(w)
		must(t, s.DeleteRuntime(ctx, x.ID))
		_, err := s.GetRuntime(ctx, x.ID)
		wantKind(t, err, errdefs.ErrNotFound)
		wantKind(t, s.DeleteRuntime(ctx, x.ID), errdefs.ErrNotFound)
		_, err = s.GetProject(ctx, x.ProjectID) // the project stays
		must(t, err)
	})
	t.Run("one of concurrent creates for a project", func(t *testing.T) { testConcurrentRuntimeCreates(t, f, w) })
}

// testFindRuntimesByIDPrefix finds r by prefixes of its id, and refuses
// prefixes that are not hex.
func testFindRuntimesByIDPrefix(t *testing.T, f *fixture, r store.Runtime) {
	s, ctx := f.s, f.ctx
	for _, prefix := range []string{r.ID[:8], r.ID[:13], r.ID} {
		got, err := s.FindRuntimesByIDPrefix(ctx, prefix, 2)
		must(t, err)
		if len(got) != 1 || got[0].ID != r.ID {
			t.Fatalf("FindRuntimesByIDPrefix(%q) = %+v", prefix, got)
		}
	}
	got, err := s.FindRuntimesByIDPrefix(ctx, "ffffffff-ffff", 2)
	must(t, err)
	if len(got) != 0 && got[0].ID != r.ID {
		t.Fatalf("an unknown prefix found %+v", got)
	}
	for _, bad := range []string{"", "abc", "ABCDEF12", "'; drop--"} {
		_, err := s.FindRuntimesByIDPrefix(ctx, bad, 2)
		wantKind(t, err, errdefs.ErrInvalidArgument)
	}
}

// testListRuntimes lists the runtimes of a new workspace of o.
func testListRuntimes(t *testing.T, f *fixture, o store.Org) {
	s, ctx := f.s, f.ctx
	w2 := f.workspace(o)
	want := []string{f.runtime(w2).ID, f.runtime(w2).ID, f.runtime(w2).ID}
	got, next, err := s.ListRuntimes(ctx, w2.ID, store.Page{})
	must(t, err)
	equal(t, "runtimes of the workspace", ids(got, func(r store.Runtime) string { return r.ID }), want)
	equal(t, "next cursor", next, "")
}

// fullRuntimeConfig is a runtime configuration with every field set.
func fullRuntimeConfig() store.RuntimeConfig {
	return store.RuntimeConfig{
		Image: "paddock/base:2", Provider: "fake", CPUMillis: 2000, MemoryMB: 1024, PidsLimit: 512, DiskMB: 4096,
		Network:            store.NetworkConfig{Mode: "proxy", Allow: []string{"*.pypi.org"}, Deny: []string{"10.0.0.0/8"}},
		IdleTimeoutSeconds: 600, MaxLifetimeSeconds: 3600, ArchiveAfterSeconds: 86400,
		Secrets: []string{"token"}, RootFS: store.RootFSWritable, User: store.UserDefault,
		Sidecars: []string{"browser"}, PublicPorts: []int{80, 3000},
		Ports: []store.DeclaredPort{{Port: 3000, Public: true}, {Port: 8080}},
	}
}

// runtimeVerbs calls each runtime verb on id at version, for the checks
// every verb passes alike.
func runtimeVerbs(s store.Store, id string, version int64) map[string]func(ctx context.Context) (store.Runtime, error) {
	return map[string]func(ctx context.Context) (store.Runtime, error){
		"SetRuntimeState": func(ctx context.Context) (store.Runtime, error) {
			return s.SetRuntimeState(ctx, id, version, store.RuntimeState{Status: store.RuntimeRunning, CurrentSandboxID: uuid.NewString()}, base)
		},
		"SetRuntimeConfig": func(ctx context.Context) (store.Runtime, error) {
			return s.SetRuntimeConfig(ctx, id, version, fullRuntimeConfig(), base)
		},
		"SetRuntimeSnapshot": func(ctx context.Context) (store.Runtime, error) {
			return s.SetRuntimeSnapshot(ctx, id, version, "paddock/archive:x", base)
		},
		"SetRuntimeWorkspaceVolume": func(ctx context.Context) (store.Runtime, error) {
			return s.SetRuntimeWorkspaceVolume(ctx, id, version, "renamed", base)
		},
	}
}

func testRuntimeVerbs(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	w := f.workspace(f.org())

	t.Run("each verb writes only its own columns", func(t *testing.T) { testRuntimeTransitions(t, f, w) })

	t.Run("a zero time is now", func(t *testing.T) {
		r := f.runtime(w)
		before := time.Now().Add(-time.Minute)
		got, err := s.SetRuntimeSnapshot(ctx, r.ID, r.Version, "paddock/archive:now", time.Time{})
		must(t, err)
		if got.UpdatedAt.Before(before) {
			t.Fatalf("UpdatedAt = %v, want about now", got.UpdatedAt)
		}
	})

	t.Run("an empty status is refused", func(t *testing.T) {
		r := f.runtime(w)
		_, err := s.SetRuntimeState(ctx, r.ID, r.Version, store.RuntimeState{CurrentSandboxID: uuid.NewString()}, base)
		wantKind(t, err, errdefs.ErrInvalidArgument)
		stored, err := s.GetRuntime(ctx, r.ID)
		must(t, err)
		equal(t, "runtime after a refused state", stored, normRuntime(r))
	})

	t.Run("after a verb the version it read is stale", func(t *testing.T) {
		for verb := range runtimeVerbs(s, "", 0) {
			r := f.runtime(w)
			_, err := runtimeVerbs(s, r.ID, r.Version)[verb](ctx)
			must(t, err)
			for other, run := range runtimeVerbs(s, r.ID, r.Version) {
				if _, err := run(ctx); !errors.Is(err, store.ErrStale) || !errors.Is(err, errdefs.ErrConflict) {
					t.Errorf("%s after %s: err = %v, want a conflict with ErrStale", other, verb, err)
				}
			}
		}
	})

	t.Run("refused writes", func(t *testing.T) { testRuntimeVerbErrors(t, f, w) })
}

// testRuntimeVerbErrors calls every verb with a stale, a future, an
// unknown and an empty id on runtimes of w: each is refused with its kind
// and writes nothing.
func testRuntimeVerbErrors(t *testing.T, f *fixture, w store.Workspace) {
	s, ctx := f.s, f.ctx
	errs := []struct {
		name    string
		id      func(store.Runtime) string
		version int64
		wantErr []error
	}{
		{"stale version", func(x store.Runtime) string { return x.ID }, 0, []error{errdefs.ErrConflict, store.ErrStale}},
		{"future version", func(x store.Runtime) string { return x.ID }, 7, []error{errdefs.ErrConflict, store.ErrStale}},
		{"missing runtime", func(store.Runtime) string { return uuid.NewString() }, 1, []error{errdefs.ErrNotFound}},
		{"missing id", func(store.Runtime) string { return "" }, 1, []error{errdefs.ErrInvalidArgument}},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			r := f.runtime(w)
			for verb, run := range runtimeVerbs(s, tc.id(r), tc.version) {
				_, err := run(ctx)
				for _, want := range tc.wantErr {
					if !errors.Is(err, want) {
						t.Errorf("%s: err = %v, want %v", verb, err, want)
					}
				}
			}
			stored, err := s.GetRuntime(ctx, r.ID)
			must(t, err)
			equal(t, "runtime after refused verbs", stored, normRuntime(r))
		})
	}
}

// testRuntimeTransitions moves a runtime of w through every verb and
// checks that each writes its columns, the version and updated_at, and
// nothing else.
func testRuntimeTransitions(t *testing.T, f *fixture, w store.Workspace) {
	s, ctx := f.s, f.ctx
	r := f.runtime(w)
	want := normRuntime(r)
	sb := uuid.NewString()
	steps := []struct {
		name  string
		write func(version int64, at time.Time) (store.Runtime, error)
		edit  func(x *store.Runtime)
	}{
		{"SetRuntimeState to starting", func(v int64, at time.Time) (store.Runtime, error) {
			return s.SetRuntimeState(ctx, r.ID, v, store.RuntimeState{Status: store.RuntimeStarting, CurrentSandboxID: sb}, at)
		}, func(x *store.Runtime) { x.Status, x.CurrentSandboxID = store.RuntimeStarting, sb }},
		{"SetRuntimeConfig", func(v int64, at time.Time) (store.Runtime, error) {
			return s.SetRuntimeConfig(ctx, r.ID, v, fullRuntimeConfig(), at)
		}, func(x *store.Runtime) { x.Config = fullRuntimeConfig() }},
		{"SetRuntimeSnapshot", func(v int64, at time.Time) (store.Runtime, error) {
			return s.SetRuntimeSnapshot(ctx, r.ID, v, "paddock/archive:abc", at)
		}, func(x *store.Runtime) { x.Snapshot = "paddock/archive:abc" }},
		{"SetRuntimeWorkspaceVolume", func(v int64, at time.Time) (store.Runtime, error) {
			return s.SetRuntimeWorkspaceVolume(ctx, r.ID, v, "renamed", at)
		}, func(x *store.Runtime) { x.WorkspaceVolume = "renamed" }},
		{"SetRuntimeState to error, unlinked", func(v int64, at time.Time) (store.Runtime, error) {
			return s.SetRuntimeState(ctx, r.ID, v, store.RuntimeState{Status: store.RuntimeError, StatusReason: "provider failed"}, at)
		}, func(x *store.Runtime) {
			x.Status, x.StatusReason, x.CurrentSandboxID = store.RuntimeError, "provider failed", ""
		}},
		{"SetRuntimeSnapshot forgetting it", func(v int64, at time.Time) (store.Runtime, error) {
			return s.SetRuntimeSnapshot(ctx, r.ID, v, "", at)
		}, func(x *store.Runtime) { x.Snapshot = "" }},
		{"SetRuntimeConfig back to a minimal one", func(v int64, at time.Time) (store.Runtime, error) {
			return s.SetRuntimeConfig(ctx, r.ID, v, r.Config, at)
		}, func(x *store.Runtime) { x.Config = r.Config }},
	}
	for _, step := range steps {
		at := f.next()
		got, err := step.write(want.Version, at)
		must(t, err)
		step.edit(&want)
		want.Version++
		want.UpdatedAt = ts(at)
		equal(t, "after "+step.name, got, want)
		stored, err := s.GetRuntime(ctx, r.ID)
		must(t, err)
		equal(t, "stored after "+step.name, stored, got)
	}
}

func testRuntimesByStatus(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	set := func(r store.Runtime, st store.RuntimeStatus) store.Runtime {
		t.Helper()
		got, err := s.SetRuntimeState(ctx, r.ID, r.Version, store.RuntimeState{Status: st}, base)
		must(t, err)
		return got
	}
	// Two orgs: the listing spans every org.
	w1, w2 := f.workspace(f.org()), f.workspace(f.org())
	starting1 := set(f.runtime(w1), store.RuntimeStarting)
	running := set(f.runtime(w2), store.RuntimeRunning)
	idle := f.runtime(w1)
	starting2 := set(f.runtime(w2), store.RuntimeStarting)

	cases := []struct {
		name     string
		statuses []store.RuntimeStatus
		want     []store.Runtime
	}{
		{"none", nil, nil},
		{"one status", []store.RuntimeStatus{store.RuntimeStarting}, []store.Runtime{starting1, starting2}},
		{"two statuses, oldest first", []store.RuntimeStatus{store.RuntimeRunning, store.RuntimeStarting}, []store.Runtime{starting1, running, starting2}},
		{"idle", []store.RuntimeStatus{store.RuntimeIdle}, []store.Runtime{idle}},
		{"no match", []store.RuntimeStatus{store.RuntimeArchived}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListRuntimesByStatus(ctx, tc.statuses)
			must(t, err)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d runtimes, want %d: %+v", len(got), len(tc.want), got)
			}
			for i := range got {
				equal(t, "runtime", got[i], normRuntime(tc.want[i]))
			}
		})
	}
}
