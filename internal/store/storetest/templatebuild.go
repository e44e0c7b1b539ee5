package storetest

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// build records a building template build of template in w.
func (f *fixture) build(w store.Workspace, template string) store.TemplateBuild {
	f.t.Helper()
	b := store.TemplateBuild{
		ID: uuid.NewString(), OrgID: w.OrgID, WorkspaceID: w.ID, Template: template, State: store.BuildBuilding,
		Image: "paddock-org/" + w.OrgID + "/" + template + ":x", CreatedAt: f.next(),
	}
	must(f.t, f.s.CreateTemplateBuild(f.ctx, b))
	b.CreatedAt = ts(b.CreatedAt)
	b.UpdatedAt = b.CreatedAt
	return b
}

func testTemplateBuilds(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o, o2 := f.org(), f.org()
	w, other := f.workspace(o), f.workspace(o)
	a, b, c := f.build(w, "web"), f.build(w, "api"), f.build(w, "web")
	f.build(other, "web")

	got, err := s.GetTemplateBuild(ctx, a.ID)
	must(t, err)
	equal(t, "get", got, a)
	if err := s.CreateTemplateBuild(ctx, store.TemplateBuild{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, Template: "x", Image: "i", State: store.BuildSucceeded}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("a build not building: err = %v, want invalid argument", err)
	}
	if _, err := s.GetTemplateBuild(ctx, uuid.NewString()); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("missing: err = %v, want not found", err)
	}

	page1, next, err := s.ListTemplateBuilds(ctx, w.ID, "", store.Page{Limit: 2})
	must(t, err)
	equal(t, "page 1", page1, []store.TemplateBuild{a, b})
	page2, _, err := s.ListTemplateBuilds(ctx, w.ID, "", store.Page{Limit: 2, Cursor: next})
	must(t, err)
	equal(t, "page 2", page2, []store.TemplateBuild{c})
	web, _, err := s.ListTemplateBuilds(ctx, w.ID, "web", store.Page{})
	must(t, err)
	equal(t, "of one template", web, []store.TemplateBuild{a, c})

	a.State, a.Digest, a.SizeBytes, a.LogTail, a.UpdatedAt = store.BuildSucceeded, "sha256:abc", 1234, "Step 1/1", f.next()
	must(t, s.FinishTemplateBuild(ctx, a))
	a.UpdatedAt = ts(a.UpdatedAt)
	got, err = s.GetTemplateBuild(ctx, a.ID)
	must(t, err)
	equal(t, "finished", got, a)
	if err := s.FinishTemplateBuild(ctx, a); !isCode(err, "template_build_finished") {
		t.Fatalf("ended twice: err = %v, want template_build_finished", err)
	}
	b.State = store.BuildBuilding
	if err := s.FinishTemplateBuild(ctx, b); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("ended building: err = %v, want invalid argument", err)
	}

	// A build left building since before c began is failed; c, begun
	// since, and the finished a are left alone.
	failedAt := f.next()
	n, err := s.FailStaleTemplateBuilds(ctx, c.CreatedAt, failedAt, "build_interrupted")
	must(t, err)
	if n != 1 {
		t.Fatalf("stale builds failed: %d, want 1 (b)", n)
	}
	got, err = s.GetTemplateBuild(ctx, b.ID)
	must(t, err)
	if got.State != store.BuildFailed || got.ErrorCode != "build_interrupted" || !got.UpdatedAt.Equal(ts(failedAt)) {
		t.Fatalf("the stale build: %+v, want failed build_interrupted at %v", got, ts(failedAt))
	}
	if got, err = s.GetTemplateBuild(ctx, c.ID); err != nil || got.State != store.BuildBuilding {
		t.Fatalf("a build begun since: %+v, %v; want building", got, err)
	}

	testOrgImages(t, f, w, o, o2, a, c)
}

// testOrgImages: an org's allow-list of built images, the count of what
// names an image, and a template's config replaced.
func testOrgImages(t *testing.T, f *fixture, w store.Workspace, o, o2 store.Org, a, c store.TemplateBuild) {
	s, ctx := f.s, f.ctx
	img := a.Image
	allowed := func(org string, want bool) {
		t.Helper()
		ok, err := s.OrgImageAllowed(ctx, org, img)
		must(t, err)
		if ok != want {
			t.Fatalf("org %s image allowed = %v, want %v", org, ok, want)
		}
	}
	allowed(o.ID, false)
	must(t, s.AddOrgImage(ctx, o.ID, img, a.ID))
	must(t, s.AddOrgImage(ctx, o.ID, img, c.ID)) // again: still one
	allowed(o.ID, true)
	allowed(o2.ID, false)
	users := func(want int64) {
		t.Helper()
		n, err := s.CountImageUsers(ctx, o.ID, img)
		must(t, err)
		if n != want {
			t.Fatalf("image users = %d, want %d", n, want)
		}
	}
	users(0)
	tpl := store.Template{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, Name: "web", CreatedAt: f.next()}
	must(t, s.CreateTemplate(ctx, tpl))
	tpl.Config.Image = img
	must(t, s.SetTemplateConfig(ctx, tpl))
	gotT, err := s.GetTemplate(ctx, tpl.ID)
	must(t, err)
	equal(t, "template image", gotT.Config.Image, img)
	users(1)
	rt := f.runtimeFor(f.project(w))
	rt.Config.Image = img
	must(t, s.CreateRuntime(ctx, rt))
	users(2)
	if n, err := s.CountImageUsers(ctx, o2.ID, img); err != nil || n != 0 {
		t.Fatalf("another org's users = %d, %v; want 0", n, err)
	}
	must(t, s.DeleteOrgImage(ctx, o.ID, img))
	allowed(o.ID, false)
	if err := s.DeleteOrgImage(ctx, o.ID, img); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("deleted twice: err = %v, want not found", err)
	}
}
