package docker

import (
	"context"
	"maps"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

var (
	_ provider.ImageInspector = (*Provider)(nil)
	_ provider.ImageChecker   = (*Provider)(nil)
)

// CheckImage tells whether a sandbox could start on image: it is on the
// engine or, when the provider pulls missing images, its registry has it
// (asked, not pulled). Anything else is not found (image_not_found).
func (p *Provider) CheckImage(ctx context.Context, image string) error {
	_, err := p.cli.ImageInspect(ctx, image)
	if err == nil {
		return nil
	}
	if !cerrdefs.IsNotFound(err) {
		return engineErr("inspect the image", err)
	}
	if !p.cfg.PullMissing || strings.HasPrefix(image, ArchiveRepository+":") {
		return errdefs.NotFound(CodeImageNotFound, "image %q is not on this engine", image).WithCause(err)
	}
	ctx, cancel := context.WithTimeout(ctx, registryCheckTimeout)
	defer cancel()
	if _, err := p.cli.DistributionInspect(ctx, image, ""); err != nil {
		return errdefs.NotFound(CodeImageNotFound, "image %q is not on this engine, and its registry did not offer it", image).WithCause(err)
	}
	return nil
}

// registryCheckTimeout bounds asking a registry whether it has an image.
const registryCheckTimeout = 20 * time.Second

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
