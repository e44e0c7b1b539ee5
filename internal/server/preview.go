package server

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"strings"

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

// warnSameSitePreviews warns in the log when preview hosts share a site
// with the console: the preview domain ("" is localhost) is the host
// users reach the server at (server: the sign-in domain, host[:port]),
// or a parent or a child of it. A preview app's page can then set
// cookies the browser sends to the console (the console refuses its
// cookie sent twice, and over https reads only its __Host- cookie, which
// no other host can set), and its requests to the console are
// same-site. In production previews belong on a registrable domain of
// their own.
func warnSameSitePreviews(logger *slog.Logger, server, previewDomain string) {
	host := server
	if h, _, err := net.SplitHostPort(server); err == nil {
		host = h
	}
	if !sameSite(host, previewDomain) {
		return
	}
	logger.Warn("preview hosts share a site with the console: their pages can set cookies the browser sends to the console; "+
		"in production, serve previews on a registrable domain of their own (preview_domain)",
		"server_host", host, "preview_domain", cmp.Or(previewDomain, "localhost"))
}

// sameSite reports whether the preview domain (""; localhost) is host,
// or a parent or a child of it, by name (an IP address has none).
func sameSite(host, previewDomain string) bool {
	norm := func(s string) string { return strings.ToLower(strings.TrimSuffix(strings.Trim(s, "[]"), ".")) }
	h, p := norm(host), norm(cmp.Or(previewDomain, "localhost"))
	if h == "" || p == "" || net.ParseIP(h) != nil || net.ParseIP(p) != nil {
		return h != "" && h == p
	}
	return h == p || strings.HasSuffix(h, "."+p) || strings.HasSuffix(p, "."+h)
}
