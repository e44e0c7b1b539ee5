package runtime

import (
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/store"
)

// TestPublishListening: of the ports a runtime declares, only those
// declared public become public, and only once listening; a port made
// private by hand loses its declaration and stays private; a runtime
// that is not running is not asked.
func TestPublishListening(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	_, rt, err := f.svc.CreateProject(ctx, f.ws, "p", "", ConfigRequest{
		Ports: []store.DeclaredPort{{Port: 8080}, {Port: 3000, Public: true}, {Port: 5000, Public: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []store.DeclaredPort{{Port: 3000, Public: true}, {Port: 5000, Public: true}, {Port: 8080}}; !slices.Equal(rt.Config.Ports, want) {
		t.Fatalf("declared ports %v, want %v sorted", rt.Config.Ports, want)
	}
	// Nothing declared public listens: nothing is written.
	got, err := f.svc.PublishListening(ctx, rt, []int{8080, 9000})
	if err != nil || got.Version != rt.Version || got.Config.PublicPorts != nil {
		t.Fatalf("publish with no declared port listening: %v, public %v, version %d (was %d)", err, got.Config.PublicPorts, got.Version, rt.Version)
	}
	if got, err = f.svc.PublishListening(ctx, rt, []int{8080, 3000, 9000}); err != nil || !slices.Equal(got.Config.PublicPorts, []int{3000}) {
		t.Fatalf("publish with 3000 listening: %v, public %v; want [3000]", err, got.Config.PublicPorts)
	}
	// Idle: not asked, 5000 stays private.
	if _, public, err := f.svc.PublishIfListening(ctx, got, 5000); err != nil || public {
		t.Fatalf("an idle runtime's declared port: public %v, %v", public, err)
	}
	if _, public, err := f.svc.PublishIfListening(ctx, got, 3000); err != nil || !public {
		t.Fatalf("a port already public: public %v, %v", public, err)
	}
	// Made private by hand, it stays private while it listens.
	if got, err = f.svc.SetPortPublic(ctx, rt.ID, 3000, false); err != nil {
		t.Fatal(err)
	}
	if got, err = f.svc.PublishListening(ctx, got, []int{3000}); err != nil || got.Config.PublicPorts != nil {
		t.Fatalf("a port made private, listening: %v, public %v", err, got.Config.PublicPorts)
	}
	if want := []store.DeclaredPort{{Port: 3000}, {Port: 5000, Public: true}, {Port: 8080}}; !slices.Equal(got.Config.Ports, want) {
		t.Fatalf("declared ports after making 3000 private %v, want %v", got.Config.Ports, want)
	}
}
