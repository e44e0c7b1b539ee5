package storetest

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// snapshot stores a snapshot named name of rt in w.
func (f *fixture) snapshot(w store.Workspace, rt store.Runtime, name string, size int64) store.Snapshot {
	f.t.Helper()
	s := store.Snapshot{
		ID: uuid.NewString(), OrgID: w.OrgID, WorkspaceID: w.ID, RuntimeID: rt.ID, Name: name,
		Provider: "docker", Image: "paddock/debian:bookworm", Config: store.RuntimeConfig{Provider: "docker", Image: "paddock/debian:bookworm", CPUMillis: 500},
		Destination: "local", Location: "snap/" + name, SizeBytes: size, CreatedAt: f.next(),
	}
	must(f.t, f.s.CreateSnapshot(f.ctx, s))
	s.CreatedAt = ts(s.CreatedAt)
	return s
}

func testSnapshots(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w, other := f.workspace(o), f.workspace(o)
	rt, rt2 := f.runtime(w), f.runtime(w)

	a := f.snapshot(w, rt, "a", 10)
	b := f.snapshot(w, rt2, "b", 20)
	c := f.snapshot(w, rt, "c", 0)
	d := f.snapshot(other, f.runtime(other), "a", 5) // a name is per workspace

	got, err := s.GetSnapshot(ctx, a.ID)
	must(t, err)
	equal(t, "get", got, a)
	if err := s.CreateSnapshot(ctx, store.Snapshot{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, RuntimeID: rt.ID,
		Name: "a", Destination: "local", Location: "x"}); !isCode(err, "snapshot_exists") {
		t.Fatalf("a taken name: err = %v, want snapshot_exists", err)
	}
	if err := s.CreateSnapshot(ctx, store.Snapshot{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("no runtime: err = %v, want invalid argument", err)
	}

	page1, next, err := s.ListSnapshots(ctx, w.ID, "", store.Page{Limit: 2})
	must(t, err)
	equal(t, "page 1", page1, []store.Snapshot{a, b})
	page2, _, err := s.ListSnapshots(ctx, w.ID, "", store.Page{Limit: 2, Cursor: next})
	must(t, err)
	equal(t, "page 2", page2, []store.Snapshot{c})
	ofRT, _, err := s.ListSnapshots(ctx, w.ID, rt.ID, store.Page{})
	must(t, err)
	equal(t, "of one runtime", ofRT, []store.Snapshot{a, c})
	all, err := s.ListOrgSnapshots(ctx, o.ID)
	must(t, err)
	equal(t, "of the org", all, []store.Snapshot{a, b, c, d})

	must(t, s.DeleteSnapshot(ctx, a.ID))
	if _, err := s.GetSnapshot(ctx, a.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("deleted: err = %v, want not found", err)
	}
	if err := s.DeleteSnapshot(ctx, a.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("deleted twice: err = %v, want not found", err)
	}
}

// isCode reports whether err is a public error with code.
func isCode(err error, code string) bool {
	e, ok := errdefs.Public(err)
	return ok && e.Code == code
}
