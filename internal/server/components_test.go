package server

import (
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/metrics"
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
		"store", "metrics", "providers", "secrets", "egress", "runtime", "ledger",
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
