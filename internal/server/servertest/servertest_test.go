package servertest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/server/servertest"
)

// TestSameComponentsAsTheServer: an Env runs the components server.Run
// builds, by the same names and in the same order, so the server the
// tests run cannot drift from the one users run; and what a component
// mounts is there (the metrics component's GET /metrics, with the
// providers the providers component registered), as in the server.
func TestSameComponentsAsTheServer(t *testing.T) {
	want, err := server.ComponentNames()
	if err != nil {
		t.Fatal(err)
	}
	env := servertest.New(t, servertest.Options{})
	if got := env.Stack.Components(); !slices.Equal(got, want) {
		t.Fatalf("servertest's components %v, the server's %v", got, want)
	}
	if len(want) != 13 || want[0] != "store" || want[len(want)-1] != "http" {
		t.Fatalf("the server's components: %v", want)
	}
	body := string(env.MustKey(t, "", 200, "GET", "/metrics", nil).Body)
	if !strings.Contains(body, `paddock_provider_errors_total{op="create",provider="fake"} 0`) {
		t.Fatalf("GET /metrics does not count the fake provider's errors:\n%s", body)
	}
}
