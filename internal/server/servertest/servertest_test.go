package servertest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/server/servertest"
	pc "github.com/paddockhq/paddock/pkg/client"
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
	if len(want) != 23 || want[0] != "store" || want[len(want)-1] != "http" {
		t.Fatalf("the server's components: %v", want)
	}
	body := string(env.MustKey(t, "", 200, "GET", "/metrics", nil).Body)
	if !strings.Contains(body, `paddock_provider_errors_total{op="create",provider="fake"} 0`) {
		t.Fatalf("GET /metrics does not count the fake provider's errors:\n%s", body)
	}
}

// TestNothingRunsInTheBackground: an Env runs no start-up reconciliation
// nor lifecycle rounds (Overrides.Manual): compute of its installation
// that no row accounts for stays, and the provider is never listed,
// until the test reconciles.
func TestNothingRunsInTheBackground(t *testing.T) {
	f := fake.New(fake.Config{})
	const instance = "test-background"
	if _, err := f.Create(t.Context(), provider.Spec{SandboxID: "orphan", Instance: instance, Workspace: "ws-orphan", Image: "paddock/debian:bookworm"}); err != nil {
		t.Fatal(err)
	}
	env := servertest.New(t, servertest.Options{Provider: f, Instance: instance})
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	if n, lists := f.Count(), f.Calls(fake.OpList); n != 1 || lists != 0 {
		t.Fatalf("after the start: %d pieces of compute, %d lists; want the orphan and no list", n, lists)
	}
	orphans, err := env.Runtimes.RemoveOrphans(t.Context())
	if err != nil || len(orphans) != 1 || f.Count() != 0 {
		t.Fatalf("RemoveOrphans = %v, %v; %d left", orphans, err, f.Count())
	}
}
