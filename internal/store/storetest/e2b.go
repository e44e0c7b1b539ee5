package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// e2bSandbox stores an E2B sandbox for a new runtime of w.
func (f *fixture) e2bSandbox(w store.Workspace, md map[string]string) store.E2BSandbox {
	f.t.Helper()
	rt := f.runtime(w)
	s := store.E2BSandbox{RuntimeID: rt.ID, WorkspaceID: w.ID, TemplateID: "base", Metadata: md, CreatedAt: f.next()}
	must(f.t, f.s.CreateE2BSandbox(f.ctx, s))
	s.CreatedAt = ts(s.CreatedAt)
	if s.Metadata == nil {
		s.Metadata = map[string]string{}
	}
	return s
}

func testE2BSandboxes(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w, other := f.workspace(o), f.workspace(o)

	a := f.e2bSandbox(w, map[string]string{"user": "alice", "empty": ""})
	b := f.e2bSandbox(w, nil)
	c := f.e2bSandbox(w, map[string]string{"k": "v"})
	f.e2bSandbox(other, nil)

	got, err := s.GetE2BSandbox(ctx, a.RuntimeID)
	must(t, err)
	equal(t, "get", got, a)

	plain := f.runtime(w)
	if _, err := s.GetE2BSandbox(ctx, plain.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("a runtime that is no E2B sandbox: err = %v, want not found", err)
	}
	if err := s.CreateE2BSandbox(ctx, store.E2BSandbox{RuntimeID: a.RuntimeID, WorkspaceID: w.ID, TemplateID: "base"}); !errdefs.IsConflict(err) {
		t.Fatalf("a second row of one runtime: err = %v, want conflict", err)
	}
	if err := s.CreateE2BSandbox(ctx, store.E2BSandbox{RuntimeID: uuid.NewString(), WorkspaceID: w.ID}); err == nil {
		t.Fatal("an E2B sandbox of no runtime was stored")
	}
	if err := s.CreateE2BSandbox(ctx, store.E2BSandbox{WorkspaceID: w.ID}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("no runtime id: err = %v, want invalid argument", err)
	}

	// Two pages of w's sandboxes, oldest first; the other workspace's not.
	page1, next, err := s.ListE2BSandboxes(ctx, w.ID, store.Page{Limit: 2})
	must(t, err)
	equal(t, "page 1", page1, []store.E2BSandbox{a, b})
	if next == "" {
		t.Fatal("page 1 has no next cursor")
	}
	page2, next, err := s.ListE2BSandboxes(ctx, w.ID, store.Page{Limit: 2, Cursor: next})
	must(t, err)
	equal(t, "page 2", page2, []store.E2BSandbox{c})
	if next != "" {
		t.Fatalf("page 2 has a next cursor %q", next)
	}

	// The row goes with its runtime.
	must(t, s.DeleteRuntime(ctx, b.RuntimeID))
	if _, err := s.GetE2BSandbox(ctx, b.RuntimeID); !errdefs.IsNotFound(err) {
		t.Fatalf("after its runtime was deleted: err = %v, want not found", err)
	}
}

// testSetSandboxExpiry: a running row's expiry is set earlier or later;
// a row that is not running is left alone.
func testSetSandboxExpiry(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)
	at := f.next()
	sb := f.runningSandbox(w, at)
	for _, exp := range []time.Time{at.Add(time.Hour), at.Add(time.Minute)} {
		ok, err := s.SetSandboxExpiry(ctx, sb.ID, exp)
		must(t, err)
		got, err := s.GetSandbox(ctx, sb.ID)
		must(t, err)
		if !ok || !got.ExpiresAt.Equal(ts(exp)) {
			t.Fatalf("set to %v: ok %v, expires %v", exp, ok, got.ExpiresAt)
		}
	}
	killed, err := s.KillSandbox(ctx, sb.ID, sb.Version, "user", "", f.next())
	must(t, err)
	ok, err := s.SetSandboxExpiry(ctx, sb.ID, at.Add(2*time.Hour))
	must(t, err)
	got, err := s.GetSandbox(ctx, sb.ID)
	must(t, err)
	if ok || !got.ExpiresAt.Equal(killed.ExpiresAt) {
		t.Fatalf("a killed row's expiry was set: ok %v, %v", ok, got.ExpiresAt)
	}
}
