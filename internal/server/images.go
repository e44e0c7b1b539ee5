package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/flock"
	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/provider"
)

// imageBuilds is the background image builder, when the configuration
// names one.
type imageBuilds struct {
	builder *imagebuild.Builder // nil: none
	// providers are those whose engine the builder builds for.
	providers []string
	// byCaller: the builder is run by whoever gave it (a test).
	byCaller bool
	// lock is the file (in the data directory) whose flock a build holds:
	// replicas on one host build on one engine, one at a time; the next
	// finds the images current. "": none.
	lock string
	stop context.CancelFunc
	done chan struct{}
}

// imageBuilds are the images a test builds itself, else the configured
// builder's.
func (w *wiring) imageBuilds(ctx context.Context, cfg *config.ProvidersConfig, providers *provider.Registry, logger *slog.Logger) (*imageBuilds, error) {
	if w.o.Builds != nil {
		return &imageBuilds{builder: w.o.Builds, providers: w.o.BuildsFor, byCaller: true}, nil
	}
	ib, err := newImageBuilds(ctx, cfg, providers, logger)
	if ib != nil && w.dataDir != "" {
		ib.lock = filepath.Join(w.dataDir, "image-builds.lock")
	}
	return ib, err
}

// newImageBuilds asks the configured builder which images it makes and
// which are already on the default provider; nothing is built yet.
func newImageBuilds(ctx context.Context, cfg *config.ProvidersConfig, providers *provider.Registry, logger *slog.Logger) (*imageBuilds, error) {
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
	present := func(ctx context.Context, ref string) (bool, error) { return provider.ImagePresent(ctx, in, ref) }
	b, err := imagebuild.New(ctx, imagebuild.Config{
		Script: cfg.ImageBuilder, Targets: cfg.ImageBuilds, Present: present,
		Logger: logger.With("component", "images"),
	})
	if err != nil {
		return nil, err
	}
	ib.builder = b
	ib.providers = sameEngine(cfg, providers.Default())
	return ib, nil
}

// sameEngine are the docker providers on the engine of the provider named
// def: the images built there serve them all, and no other.
func sameEngine(cfg *config.ProvidersConfig, def string) []string {
	host := func(pc config.ProviderConfig) string {
		if pc.DockerHost != "" {
			return pc.DockerHost
		}
		return cfg.DockerHost
	}
	list := cfg.ProviderList()
	i := slices.IndexFunc(list, func(pc config.ProviderConfig) bool { return pc.Name == def })
	if i < 0 || list[i].Kind != "docker" {
		return []string{def}
	}
	var out []string
	for _, pc := range list {
		if pc.Kind == "docker" && host(pc) == host(list[i]) {
			out = append(out, pc.Name)
		}
	}
	return out
}

// start builds in the background, until the builds are done or the server
// stops.
func (ib *imageBuilds) start(ctx context.Context) {
	if ib.builder == nil || ib.byCaller {
		return
	}
	ctx, ib.stop = context.WithCancel(context.WithoutCancel(ctx))
	ib.done = make(chan struct{})
	go func() {
		defer close(ib.done)
		if ib.lock != "" {
			unlock, err := flock.LockContext(ctx, ib.lock)
			if ctx.Err() != nil {
				return // stopped while another replica builds
			}
			if err == nil { // else a lock that cannot be had: build anyway
				defer unlock()
			}
		}
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
