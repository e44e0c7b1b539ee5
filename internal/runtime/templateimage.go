package runtime

import (
	"context"

	"github.com/paddockhq/paddock/internal/store"
)

// SetTemplateImage points template t of ws at image (a build's), the rest
// of its config kept, checked as a template's config is.
func (s *Service) SetTemplateImage(ctx context.Context, ws store.Workspace, t store.Template, image string) (store.Template, error) {
	c := t.Config
	c.Image = image
	if _, err := s.checkConfig(ctx, ws, c); err != nil {
		return store.Template{}, err
	}
	t.Config = c
	if err := s.store.SetTemplateConfig(ctx, t); err != nil {
		return store.Template{}, err
	}
	return s.store.GetTemplate(ctx, t.ID)
}
