package provider

import (
	"context"

	"github.com/paddockhq/paddock/internal/errdefs"
)

var _ ImageBuilder = (*Breaker)(nil)

// BuildImage builds an image on the provider's engine; a provider that
// cannot build answers not implemented.
func (b *Breaker) BuildImage(ctx context.Context, spec BuildSpec, progress func(BuildLine)) (BuiltImage, error) {
	ib, ok := b.p.(ImageBuilder)
	if !ok {
		return BuiltImage{}, errdefs.NotImplemented("image_build_not_supported", "provider %s cannot build images", b.p.Name())
	}
	return call(b, "build_image", func() (BuiltImage, error) { return ib.BuildImage(ctx, spec, progress) })
}

// RemoveImage removes an image the provider built; a provider that cannot
// build answers not implemented.
func (b *Breaker) RemoveImage(ctx context.Context, ref string) error {
	ib, ok := b.p.(ImageBuilder)
	if !ok {
		return errdefs.NotImplemented("image_build_not_supported", "provider %s cannot build images", b.p.Name())
	}
	return call0(b, "remove_image", func() error { return ib.RemoveImage(ctx, ref) })
}
