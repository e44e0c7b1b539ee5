package server

import (
	"context"
	"net"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
)

// previewComponent is the preview gateway's configuration: the domain,
// scheme and port of the preview URLs the API hands out and serves.
func (w *wiring) previewComponent() component.Registration {
	return component.Def[api.Preview]{
		Name: previewName,
		Init: func(_ context.Context, ic *component.InitContext) (api.Preview, error) {
			if p := w.o.Preview; p != nil {
				given := *p
				if given.Port == "" {
					given.Port = portOf(w.doors.api.Addr())
				}
				return given, nil
			}
			cfg, err := component.SectionOf[*config.PreviewConfig](ic)
			if err != nil {
				return api.Preview{}, err
			}
			return previewOf(cfg, w.doors.api.Addr()), nil
		},
	}.Registration()
}

// portOf is the port of a listener's address.
func portOf(addr net.Addr) string {
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return ""
	}
	return port
}

// previewOf is the API's preview configuration: the URLs it hands out use
// the configured scheme and port, else http and the listen port.
func previewOf(cfg *config.PreviewConfig, addr net.Addr) api.Preview {
	p := api.Preview{Domain: cfg.PreviewDomain, Scheme: cfg.PreviewScheme, Port: cfg.PreviewPort}
	switch p.Port {
	case "":
		p.Port = portOf(addr)
	case "none":
		p.Port = ""
	}
	return p
}
