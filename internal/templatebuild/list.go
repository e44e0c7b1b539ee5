package templatebuild

import (
	"context"
	"strconv"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

func itoa(n int) string { return strconv.Itoa(n) }

// List lists ws's builds, oldest first (template's only, unless "").
func (s *Service) List(ctx context.Context, ws store.Workspace, template string, page store.Page) ([]store.TemplateBuild, string, error) {
	return s.cfg.Store.ListTemplateBuilds(ctx, ws.ID, template, page)
}

// Get returns ws's build id; another workspace's is not found.
func (s *Service) Get(ctx context.Context, ws store.Workspace, id string) (store.TemplateBuild, error) {
	b, err := s.cfg.Store.GetTemplateBuild(ctx, id)
	if err == nil && b.WorkspaceID != ws.ID {
		err = errdefs.ErrNotFound
	}
	if errdefs.IsNotFound(err) {
		return store.TemplateBuild{}, errdefs.NotFound(CodeBuildNotFound, "no template build %s in this workspace", id)
	}
	return b, err
}

// RemoveImages removes the images t's builds made that no runtime or
// template of its org names (t has been deleted): off the org's
// allow-list, then off the engine. An image still named is kept, and
// its reference returned.
func (s *Service) RemoveImages(ctx context.Context, ws store.Workspace, t store.Template) (kept []string, err error) {
	page := store.Page{Limit: 100}
	for {
		bs, next, err := s.cfg.Store.ListTemplateBuilds(ctx, ws.ID, t.Name, page)
		if err != nil {
			return kept, err
		}
		for _, b := range bs {
			if b.State != store.BuildSucceeded {
				continue
			}
			in, err := s.imageKept(ctx, b, t)
			if err != nil {
				return kept, err
			}
			if in {
				kept = append(kept, b.Image)
			}
		}
		if next == "" {
			return kept, nil
		}
		page.Cursor = next
	}
}

// imageKept removes b's image unless a runtime or template names it, and
// reports whether it was kept.
func (s *Service) imageKept(ctx context.Context, b store.TemplateBuild, t store.Template) (bool, error) {
	if ok, err := s.cfg.Store.OrgImageAllowed(ctx, b.OrgID, b.Image); err != nil || !ok {
		return false, err
	}
	n, err := s.cfg.Store.CountImageUsers(ctx, b.OrgID, b.Image)
	if err != nil {
		return false, err
	}
	if n > 0 {
		return true, nil
	}
	if err := s.cfg.Store.DeleteOrgImage(ctx, b.OrgID, b.Image); err != nil && !errdefs.IsNotFound(err) {
		return false, err
	}
	s.removeImage(ctx, b.Image)
	return false, nil
}
