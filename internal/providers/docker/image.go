package docker

import (
	"context"
	"maps"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

var _ provider.ImageInspector = (*Provider)(nil)

// ImageLabels are the labels of a local image (never pulled).
func (p *Provider) ImageLabels(ctx context.Context, image string) (map[string]string, error) {
	img, err := p.cli.ImageInspect(ctx, image)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, errdefs.NotFound(CodeImageNotFound, "image %q is not on this engine", image).WithCause(err)
		}
		return nil, engineErr("inspect the image", err)
	}
	out := map[string]string{}
	if img.Config != nil {
		maps.Copy(out, img.Config.Labels)
	}
	return out, nil
}
