package storetest

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// template stores a template named name in w.
func (f *fixture) template(w store.Workspace, name string, c store.RuntimeConfig) store.Template {
	f.t.Helper()
	t := store.Template{ID: uuid.NewString(), OrgID: w.OrgID, WorkspaceID: w.ID, Name: name,
		Description: "d " + name, Config: c, CreatedAt: f.next()}
	must(f.t, f.s.CreateTemplate(f.ctx, t))
	t.CreatedAt = ts(t.CreatedAt)
	return t
}

func testTemplates(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w, other := f.workspace(o), f.workspace(o)

	full := store.RuntimeConfig{Image: "paddock/debian:bookworm", CPUMillis: 500, MemoryMB: 256,
		Network: store.NetworkConfig{Mode: "proxy", Allow: []string{"example.com"}}, Secrets: []string{"k"},
		IdleTimeoutSeconds: 60, ArchiveAfterSeconds: 3600, Harness: "claude", Model: "m-1"}
	a := f.template(w, "a", full)
	b := f.template(w, "b", store.RuntimeConfig{})
	c := f.template(w, "c", store.RuntimeConfig{Image: "x"})
	f.template(other, "a", store.RuntimeConfig{})

	got, err := s.GetTemplate(ctx, a.ID)
	must(t, err)
	equal(t, "get", got, a)
	got, err = s.GetTemplateByName(ctx, w.ID, "a")
	must(t, err)
	equal(t, "get by name", got, a)
	if _, err := s.GetTemplateByName(ctx, w.ID, "none"); !errdefs.IsNotFound(err) {
		t.Fatalf("a missing name: err = %v, want not found", err)
	}
	dup := store.Template{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, Name: "a"}
	if err := s.CreateTemplate(ctx, dup); !errdefs.IsConflict(err) {
		t.Fatalf("a name the workspace has: err = %v, want conflict", err)
	}
	if err := s.CreateTemplate(ctx, store.Template{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("no name: err = %v, want invalid argument", err)
	}

	// Two pages of w's templates, oldest first; the other workspace's not.
	page1, next, err := s.ListTemplates(ctx, w.ID, store.Page{Limit: 2})
	must(t, err)
	equal(t, "page 1", page1, []store.Template{a, b})
	page2, next, err := s.ListTemplates(ctx, w.ID, store.Page{Limit: 2, Cursor: next})
	must(t, err)
	equal(t, "page 2", page2, []store.Template{c})
	if next != "" {
		t.Fatalf("cursor after the last page = %q", next)
	}

	must(t, s.DeleteTemplate(ctx, b.ID))
	if _, err := s.GetTemplate(ctx, b.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("a deleted template: err = %v, want not found", err)
	}
	if err := s.DeleteTemplate(ctx, b.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("deleting it again: err = %v, want not found", err)
	}
}
