package storetest

import (
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

func testRuntimeUpdates(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)

	t.Run("writes and bumps the version", func(t *testing.T) { testUpdateRuntime(t, f, w) })

	t.Run("identity is not rewritten", func(t *testing.T) {
		r := f.runtime(w)
		u := r
		u.OrgID = uuid.NewString()
		u.WorkspaceID = uuid.NewString()
		u.ProjectID = uuid.NewString()
		u.CreatedAt = base.Add(-time.Hour)
		got, err := s.UpdateRuntime(ctx, u)
		must(t, err)
		if got.OrgID != r.OrgID || got.WorkspaceID != r.WorkspaceID || got.ProjectID != r.ProjectID || !got.CreatedAt.Equal(ts(r.CreatedAt)) {
			t.Fatalf("identity changed: got %+v, created %+v", got, r)
		}
	})

	t.Run("zero updated at is set by the store", func(t *testing.T) {
		r := f.runtime(w)
		r.UpdatedAt = time.Time{}
		before := time.Now().Add(-time.Minute)
		got, err := s.UpdateRuntime(ctx, r)
		must(t, err)
		if got.UpdatedAt.Before(before) {
			t.Fatalf("UpdatedAt = %v, want about now", got.UpdatedAt)
		}
	})

	errs := []struct {
		name    string
		edit    func(*store.Runtime)
		wantErr error
	}{
		{"stale version", func(x *store.Runtime) { x.Version = 0 }, errdefs.ErrConflict},
		{"future version", func(x *store.Runtime) { x.Version = 7 }, errdefs.ErrConflict},
		{"missing runtime", func(x *store.Runtime) { x.ID = uuid.NewString() }, errdefs.ErrNotFound},
		{"missing id", func(x *store.Runtime) { x.ID = "" }, errdefs.ErrInvalidArgument},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			r := f.runtime(w)
			x := r
			x.Status = store.RuntimeRunning
			tc.edit(&x)
			_, err := s.UpdateRuntime(ctx, x)
			wantKind(t, err, tc.wantErr)
			stored, err := s.GetRuntime(ctx, r.ID)
			must(t, err)
			equal(t, "runtime after a failed update", stored, normRuntime(r))
		})
	}

	t.Run("after an update the old version conflicts", func(t *testing.T) {
		r := f.runtime(w)
		_, err := s.UpdateRuntime(ctx, r)
		must(t, err)
		_, err = s.UpdateRuntime(ctx, r)
		wantKind(t, err, errdefs.ErrConflict)
	})
}

// testUpdateRuntime changes every mutable column of a runtime of w, twice.
func testUpdateRuntime(t *testing.T, f *fixture, w store.Workspace) {
	s, ctx := f.s, f.ctx
	r := f.runtime(w)
	u := r
	u.Status = store.RuntimeError
	u.StatusReason = "provider failed"
	u.Config.Image = "paddock/base:2"
	u.Config.Network = store.NetworkConfig{Mode: "open", Allow: []string{"*.pypi.org"}}
	u.CurrentSandboxID = uuid.NewString()
	u.WorkspaceVolume = "renamed"
	u.Snapshot = "paddock/archive:abc"
	u.Config.MaxLifetimeSeconds = 3600
	u.Config.ArchiveAfterSeconds = 86400
	u.UpdatedAt = base.Add(time.Hour)
	got, err := s.UpdateRuntime(ctx, u)
	must(t, err)
	want := u
	want.Version = 2
	equal(t, "UpdateRuntime result", got, normRuntime(want))
	stored, err := s.GetRuntime(ctx, r.ID)
	must(t, err)
	equal(t, "stored runtime", stored, got)

	// The returned record is the next read version.
	got.Status = store.RuntimeIdle
	got, err = s.UpdateRuntime(ctx, got)
	must(t, err)
	equal(t, "version after second update", got.Version, int64(3))
}

func testRuntimesByStatus(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	set := func(r store.Runtime, st store.RuntimeStatus) store.Runtime {
		t.Helper()
		r.Status = st
		got, err := s.UpdateRuntime(ctx, r)
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
