package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
)

// imageBuilds is the background image builder, when the configuration
// names one.
type imageBuilds struct {
	builder *imagebuild.Builder // nil: none
	stop    context.CancelFunc
	done    chan struct{}
}

// newImageBuilds asks the configured builder which images it makes and
// which are already on the default provider; nothing is built yet.
func newImageBuilds(ctx context.Context, cfg config.Config, providers *provider.Registry, logger *slog.Logger) (*imageBuilds, error) {
	ib := &imageBuilds{}
	if cfg.ImageBuilder == "" {
		return ib, nil
	}
	p, err := providers.Get(providers.Default())
	if err != nil {
		return nil, err
	}
	in, ok := p.(provider.ImageInspector)
	if !ok {
		return nil, fmt.Errorf("image builder: provider %s cannot inspect images", p.Name())
	}
	present := func(ctx context.Context, ref string) (bool, error) {
		_, err := in.ImageLabels(ctx, ref)
		if errdefs.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
	b, err := imagebuild.New(ctx, imagebuild.Config{
		Script: cfg.ImageBuilder, Targets: cfg.ImageBuilds, Present: present,
		Logger: logger.With("component", "images"),
	})
	if err != nil {
		return nil, err
	}
	ib.builder = b
	return ib, nil
}

// runtimeImages is what the runtime service asks about images being built
// (no interface holding a nil builder).
func (ib *imageBuilds) runtimeImages() runtime.ImageBuilds {
	if ib.builder == nil {
		return nil
	}
	return ib.builder
}

// start builds in the background, until the builds are done or the server
// stops.
func (ib *imageBuilds) start(ctx context.Context) {
	if ib.builder == nil {
		return
	}
	ctx, ib.stop = context.WithCancel(context.WithoutCancel(ctx))
	ib.done = make(chan struct{})
	go func() {
		defer close(ib.done)
		ib.builder.Run(ctx)
	}()
}

// close stops the build under way and waits for its script to end.
func (ib *imageBuilds) close() {
	if ib.stop != nil {
		ib.stop()
		<-ib.done
	}
}
