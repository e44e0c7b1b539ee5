package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

func testCapabilityVersions(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	o := f.org()
	v1 := store.CapabilityVersion{ID: uuid.NewString(), OrgID: o.ID, Name: "tools", Version: "1.0.0", Description: "d",
		Digest: "sha256:aa", Contents: []byte(`{"agents":["a"]}`), Bundle: []byte{1, 2, 3}, SizeBytes: 3, CreatedAt: f.next()}
	must(t, s.CreateCapabilityVersion(f.ctx, v1))
	v2 := v1
	v2.ID, v2.Version, v2.Digest, v2.CreatedAt = uuid.NewString(), "1.1.0", "sha256:bb", f.next()
	must(t, s.CreateCapabilityVersion(f.ctx, v2))
	dup := v1
	dup.ID = uuid.NewString()
	if err := s.CreateCapabilityVersion(f.ctx, dup); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("the same name and version twice: %v, want a conflict", err)
	}
	got, err := s.GetCapabilityVersion(f.ctx, o.ID, "tools", "1.0.0")
	must(t, err)
	want := v1
	want.CreatedAt = want.CreatedAt.UTC().Truncate(1000)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("get:\n got %+v\nwant %+v", got, want)
	}
	other := f.org()
	if _, err := s.GetCapabilityVersion(f.ctx, other.ID, "tools", "1.0.0"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("another org's version: %v, want not found", err)
	}
	list, err := s.ListCapabilityVersions(f.ctx, o.ID, "")
	must(t, err)
	if len(list) != 2 || list[0].Version != "1.0.0" || list[1].Version != "1.1.0" || list[0].Bundle != nil {
		t.Fatalf("list: %+v", list)
	}
	if list, _ := s.ListCapabilityVersions(f.ctx, o.ID, "nope"); len(list) != 0 {
		t.Fatalf("list of an unknown name: %+v", list)
	}
	must(t, s.DeleteCapabilityVersion(f.ctx, o.ID, "tools", "1.0.0"))
	if err := s.DeleteCapabilityVersion(f.ctx, o.ID, "tools", "1.0.0"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("delete twice: %v, want not found", err)
	}
}

func testBindings(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	o := f.org()
	w := f.workspace(o)
	rt := f.runtime(w)
	a := store.CapabilityBinding{ID: uuid.NewString(), OrgID: o.ID, RuntimeID: rt.ID, Source: "inventory", Name: "tools",
		Version: "1.0.0", Enabled: true, Flags: map[string]bool{"x": true}, CreatedAt: f.next()}
	must(t, s.CreateBinding(f.ctx, a))
	b := store.CapabilityBinding{ID: uuid.NewString(), OrgID: o.ID, RuntimeID: rt.ID, Source: "catalog", Name: "memory",
		Version: "1.0.0", CreatedAt: f.next()}
	must(t, s.CreateBinding(f.ctx, b))
	dup := a
	dup.ID = uuid.NewString()
	if err := s.CreateBinding(f.ctx, dup); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("one name bound twice: %v, want a conflict", err)
	}
	bad := a
	bad.ID, bad.Name, bad.Source = uuid.NewString(), "other", "somewhere"
	if err := s.CreateBinding(f.ctx, bad); err == nil {
		t.Fatal("a binding from an unknown source was stored")
	}
	list, err := s.ListBindings(f.ctx, rt.ID)
	must(t, err)
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || list[0].Rev != 1 || !list[0].Flags["x"] || list[1].Flags == nil {
		t.Fatalf("list in install order: %+v", list)
	}
	n, err := s.CountInventoryBindings(f.ctx, o.ID, "tools", "1.0.0")
	must(t, err)
	if n != 1 {
		t.Fatalf("inventory bindings of tools 1.0.0: %d", n)
	}

	upd := list[0]
	upd.Enabled, upd.Version, upd.Flags = false, "1.1.0", map[string]bool{"x": false}
	got, err := s.UpdateBinding(f.ctx, upd)
	must(t, err)
	if got.Rev != 2 || got.Enabled || got.Version != "1.1.0" || got.Flags["x"] {
		t.Fatalf("updated: %+v", got)
	}
	if _, err := s.UpdateBinding(f.ctx, upd); !errors.Is(err, store.ErrStale) {
		t.Fatalf("a stale revision: %v, want ErrStale", err)
	}
	must(t, s.SetBindingStatus(f.ctx, a.ID, []byte(`{"state":"applied"}`), f.next()))
	got, err = s.GetBinding(f.ctx, a.ID)
	must(t, err)
	if string(got.Status) != `{"state":"applied"}` || got.Rev != 2 {
		t.Fatalf("status: %+v", got)
	}
	if ok, err := s.ReplaceBindingStatus(f.ctx, a.ID, []byte(`{"state":"pending"}`), []byte(`{"state":"x"}`)); err != nil || ok {
		t.Fatalf("replace from a status that is not the stored one: %v %v", ok, err)
	}
	if ok, err := s.ReplaceBindingStatus(f.ctx, a.ID, []byte(`{"state":"applied"}`), []byte(`{"state":"failed"}`)); err != nil || !ok {
		t.Fatalf("replace from the stored status: %v %v", ok, err)
	}
	if got, _ := s.GetBinding(f.ctx, a.ID); string(got.Status) != `{"state":"failed"}` {
		t.Fatalf("replaced status: %s", got.Status)
	}
	must(t, s.DeleteBinding(f.ctx, b.ID))
	if _, err := s.GetBinding(f.ctx, b.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("deleted binding: %v", err)
	}
	if err := s.SetBindingStatus(f.ctx, b.ID, []byte(`{}`), f.next()); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("status of a deleted binding: %v", err)
	}

	// Bindings and sessions go with their runtime.
	sess := store.Session{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, RuntimeID: rt.ID, Kind: "prompt",
		Harness: "claude-code", Status: "completed", CreatedAt: f.next()}
	must(t, s.CreateSession(f.ctx, sess))
	must(t, s.AppendSessionEvents(f.ctx, []store.SessionEvent{{SessionID: sess.ID, Seq: 1, Type: "message", Body: []byte(`{}`)}}))
	must(t, s.DeleteRuntime(f.ctx, rt.ID))
	if _, err := s.GetBinding(f.ctx, a.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("a binding of a deleted runtime: %v", err)
	}
	if _, err := s.GetSession(f.ctx, sess.ID); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("a session of a deleted runtime: %v", err)
	}
	t.Run("one of concurrent status replacements", func(t *testing.T) { testConcurrentStatusReplaces(t, f, w) })
}

func testSessions(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	o := f.org()
	w := f.workspace(o)
	rt := f.runtime(w)
	var ids []string
	for range 3 {
		sess := store.Session{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, RuntimeID: rt.ID, Kind: "prompt",
			Harness: "codex", Status: "running", Title: "hello", CreatedAt: f.next()}
		must(t, s.CreateSession(f.ctx, sess))
		ids = append(ids, sess.ID)
	}
	page, next, err := s.ListSessions(f.ctx, rt.ID, store.Page{Limit: 2})
	must(t, err)
	if len(page) != 2 || page[0].ID != ids[2] || page[1].ID != ids[1] || next == "" {
		t.Fatalf("first page, newest first: %+v", page)
	}
	page, next, err = s.ListSessions(f.ctx, rt.ID, store.Page{Limit: 2, Cursor: next})
	must(t, err)
	if len(page) != 1 || page[0].ID != ids[0] || next != "" {
		t.Fatalf("second page: %+v", page)
	}

	sess, err := s.GetSession(f.ctx, ids[0])
	must(t, err)
	sess.HarnessSessionID, sess.Status, sess.Turns, sess.Events, sess.UpdatedAt = "h-1", "completed", 1, 2, f.next()
	must(t, s.UpdateSession(f.ctx, sess))
	got, err := s.GetSession(f.ctx, ids[0])
	must(t, err)
	if got.HarnessSessionID != "h-1" || got.Status != "completed" || got.Turns != 1 || got.Events != 2 || got.Title != "hello" {
		t.Fatalf("updated session: %+v", got)
	}
	at := f.next()
	must(t, s.AppendSessionEvents(f.ctx, []store.SessionEvent{
		{SessionID: ids[0], Seq: 1, Turn: 1, Type: "message", At: at, Body: []byte(`{"text":"hi"}`)},
		{SessionID: ids[0], Seq: 2, Turn: 1, Type: "done", At: at, Body: []byte(`{}`)},
	}))
	if err := s.AppendSessionEvents(f.ctx, []store.SessionEvent{{SessionID: ids[0], Seq: 2, Type: "done", Body: []byte(`{}`)}}); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("a sequence number twice: %v, want a conflict", err)
	}
	events, err := s.ListSessionEvents(f.ctx, ids[0])
	must(t, err)
	if len(events) != 2 || events[0].Seq != 1 || events[1].Type != "done" || string(events[0].Body) != `{"text":"hi"}` ||
		!events[0].At.Equal(at.UTC().Truncate(1000)) {
		t.Fatalf("events: %+v", events)
	}
	if err := s.UpdateSession(f.ctx, store.Session{ID: "nope"}); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("update of an unknown session: %v", err)
	}
	t.Run("one of concurrent appends of a sequence number", func(t *testing.T) { testConcurrentAppends(t, f, w) })
}
