package storetest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// world stores a starting world of w, made by replica-a.
func (f *fixture) world(w store.Workspace, name string) store.World {
	f.t.Helper()
	x := store.World{ID: uuid.NewString(), OrgID: w.OrgID, WorkspaceID: w.ID, Name: name, Status: store.WorldStarting,
		Spec: json.RawMessage(`{"v":1,"members":[]}`), CreatedAt: f.next(), Runner: "replica-a"}
	must(f.t, f.s.CreateWorld(f.ctx, x))
	x.CreatedAt = ts(x.CreatedAt)
	return x
}

func testWorlds(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w, other := f.workspace(o), f.workspace(o)
	a, b, c := f.world(w, "a"), f.world(w, "b"), f.world(w, "c")
	f.world(other, "d")

	got, err := s.GetWorld(ctx, a.ID)
	must(t, err)
	equal(t, "get", got, a)
	if _, err := s.GetWorld(ctx, uuid.NewString()); !errdefs.IsNotFound(err) {
		t.Fatalf("a missing world: err = %v, want not found", err)
	}
	if err := s.CreateWorld(ctx, store.World{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, Name: "x", Status: store.WorldStarting}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("a world without its spec: err = %v, want invalid argument", err)
	}

	// A world whose runner is unknown (made before its column) reads "".
	unknown := store.World{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: other.ID, Name: "e", Status: store.WorldStarting,
		Spec: json.RawMessage(`{"v":1,"members":[]}`), CreatedAt: f.next()}
	must(t, s.CreateWorld(ctx, unknown))
	if got, err := s.GetWorld(ctx, unknown.ID); err != nil || got.Runner != "" {
		t.Fatalf("a world made without a runner: %+v, %v", got, err)
	}

	first, next, err := s.ListWorlds(ctx, w.ID, store.Page{Limit: 2})
	must(t, err)
	rest, _, err := s.ListWorlds(ctx, w.ID, store.Page{Limit: 2, Cursor: next})
	must(t, err)
	equal(t, "workspace's worlds by page", append(first, rest...), []store.World{a, b, c})

	// An update lands only from the status it was decided on.
	// It writes the runner too (a delete records the replica that deletes).
	b.Status, b.Spec, b.Runner = store.WorldRunning, json.RawMessage(`{"v":1,"members":[{"name":"m"}]}`), "replica-b"
	ok, err := s.UpdateWorld(ctx, b, store.WorldStarting)
	must(t, err)
	if !ok {
		t.Fatal("an update from the stored status did not land")
	}
	stale := b
	stale.Status, stale.Runner = store.WorldFailed, "replica-c"
	if ok, err := s.UpdateWorld(ctx, stale, store.WorldStarting); err != nil || ok {
		t.Fatalf("an update from a status the world left: ok = %v, err = %v", ok, err)
	}
	got, err = s.GetWorld(ctx, b.ID)
	must(t, err)
	equal(t, "updated", got, b)

	a.Status = store.WorldDeleted
	_, err = s.UpdateWorld(ctx, a, store.WorldStarting)
	must(t, err)
	live, err := s.ListLiveWorlds(ctx)
	must(t, err)
	var ours []string
	for _, l := range live {
		if l.WorkspaceID == w.ID {
			ours = append(ours, l.ID)
		}
	}
	equal(t, "live", ours, []string{b.ID, c.ID})
}
