package server

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/provider"
)

// TestComponentOrder: the server's components form a graph without a
// cycle or a missing requirement, and initialise in this order: the
// store first, the HTTP API last, so that it stops taking requests
// before anything it serves closes (they close in reverse).
func TestComponentOrder(t *testing.T) {
	got, err := ComponentNames()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"store", "access", "metrics", "providers", "secrets", "egress", "runtime", "ledger",
		"bindings", "sessions", "lifecycle", "ssh", "preview", "http",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// TestMountedFeaturesTestsReplace: a feature a test mounts takes the
// place of a component's of the same name (mounting both would panic),
// and the others are mounted besides.
func TestMountedFeaturesTestsReplace(t *testing.T) {
	w := &wiring{o: Overrides{Mount: []api.Feature{api.Metrics(metrics.New()), api.SSH(nil)}}}
	w.mount(api.Credits(nil))
	w.mount(api.Metrics(metrics.New()))
	var names []string
	for _, f := range w.mountedFeatures() {
		names = append(names, f.Name)
	}
	if want := []string{"credits", "metrics", "ssh"}; !slices.Equal(names, want) {
		t.Fatalf("mounted %v, want %v", names, want)
	}
}

// TestOneAccessService: the SSH gateway asks the access service the API
// asks, the access component's; and with the gateway off, its component
// has no instance (nil, not a nil *sshServer).
func TestOneAccessService(t *testing.T) {
	for _, sshListen := range []string{"127.0.0.1:0", "off"} {
		cfg, f, ln := failingConfig(t)
		cfg.SSHListen = sshListen
		s, err := Build(t.Context(), cfg, slog.New(slog.DiscardHandler), io.Discard,
			Overrides{Listener: ln, Providers: []provider.Provider{f}, Manual: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		gw := s.set.Get(sshName)
		if sshListen == "off" {
			if gw != nil {
				t.Fatalf("the ssh component when off: %#v, want nil", gw)
			}
			continue
		}
		if acc := gw.(*sshServer).cfg.Access; acc == nil || acc != s.Access() || s.http.access.svc != acc {
			t.Fatalf("the SSH gateway asks %p, the API %p", acc, s.Access())
		}
	}
}
