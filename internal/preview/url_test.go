package preview

import (
	"maps"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/store"
)

// TestURLAndEnv: the URLs a sandbox is told are the gateway's, whatever
// the configuration: the template with a port filled in is that port's
// URL, and each declared port has its own variable.
func TestURLAndEnv(t *testing.T) {
	rt := store.Runtime{ID: "1f9c0a7e-42b8-4c1d-9e2f-0123456789ab",
		Config: store.RuntimeConfig{Ports: []store.DeclaredPort{{Port: 3000, Public: true}, {Port: 8080}}}}
	for _, tc := range []struct {
		cfg  Config
		want string // port 3000's URL
	}{
		{Config{Port: "8080"}, "http://3000-1f9c0a7e42b8.localhost:8080/"},
		{Config{Domain: "Preview.Example.com", Scheme: "https"}, "https://3000-1f9c0a7e42b8.preview.example.com/"},
		{Config{Domain: "p.example.com", Scheme: "http", Port: "8443"}, "http://3000-1f9c0a7e42b8.p.example.com:8443/"},
	} {
		g := New(Options{Config: tc.cfg})
		if got := g.URL(rt, 3000); got != tc.want || tc.cfg.URL(rt.ID, 3000) != got {
			t.Fatalf("%+v: the gateway's URL %q, the config's %q; want %q", tc.cfg, got, tc.cfg.URL(rt.ID, 3000), tc.want)
		}
		env := tc.cfg.Env(rt)
		want := map[string]string{
			EnvTemplate:            strings.Replace(tc.want, "3000", PortPlaceholder, 1),
			EnvPortPrefix + "3000": tc.want,
			EnvPortPrefix + "8080": g.URL(rt, 8080),
		}
		if !maps.Equal(env, want) {
			t.Fatalf("%+v: env %v, want %v", tc.cfg, env, want)
		}
		// The gateway serves the host it hands out.
		host := strings.TrimSuffix(strings.SplitN(tc.want, "://", 2)[1], "/")
		if port, short, ok := g.host(host); !ok || port != 3000 || short != "1f9c0a7e42b8" {
			t.Fatalf("%+v: host %q parses as %d %q %v", tc.cfg, host, port, short, ok)
		}
	}
}
