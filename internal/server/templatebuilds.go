package server

import (
	"context"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/templatebuild"
)

// templateBuildsComponent builds templates' images from Dockerfiles on
// the engine of the provider configured (the default one unless said),
// within the configured limits; it mounts the build's and the builds'
// routes. From its Start it fails, every minute, the builds a stopped
// server left building past their time limit; its Close stops that.
func (w *wiring) templateBuildsComponent() component.Registration {
	return component.Def[*templatebuild.Service]{
		Name:     buildsName,
		Requires: []string{storeName, providersName, runtimeName},
		Init: func(_ context.Context, ic *component.InitContext) (*templatebuild.Service, error) {
			cfg, err := component.SectionOf[*config.TemplateBuildsConfig](ic)
			if err != nil {
				return nil, err
			}
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			ps, err := component.Get[*providerSet](ic, providersName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			s := templatebuild.New(templatebuild.Config{
				Store: in.st, Runtimes: rp.svc, Providers: ps.reg, Provider: cfg.TemplateBuildProvider,
				MaxContextBytes: cfg.TemplateBuildMaxContextMB << 20, Timeout: cfg.TemplateBuildTimeout,
				CPUMillis: cfg.TemplateBuildCPUMillis, MemoryMB: cfg.TemplateBuildMemoryMB,
				Logger: in.logger.With("component", buildsName), Now: w.now,
			})
			w.mount(api.TemplateBuilds(s))
			return s, nil
		},
		Start: func(_ context.Context, s *templatebuild.Service) error {
			s.StartSweeping()
			return nil
		},
		Close: func(_ context.Context, s *templatebuild.Service) error {
			s.Close()
			return nil
		},
	}.Registration()
}
