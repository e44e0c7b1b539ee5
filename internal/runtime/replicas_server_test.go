package runtime_test

import (
	"fmt"
	"sync"
	"testing"

	pc "github.com/paddockhq/paddock/pkg/client"

	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestTwoServersStartOnce: two servers on one PostgreSQL database and one
// provider, each asked over its API to start the same runtime several
// times at once, start it once: one 200, every other answer 409
// runtime_already_running, one compute. Each server's runtime service
// takes the store's lock as the server wires it.
func TestTwoServersStartOnce(t *testing.T) {
	dsn := testenv.Postgres(t)
	prov := fake.New(fake.Config{})
	const instance = "test-two-servers"
	a := servertest.New(t, servertest.Options{Provider: prov, Instance: instance, Store: dsn})
	b := servertest.New(t, servertest.Options{Provider: prov, Instance: instance, Store: dsn})
	a.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	a.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	const runtimes, starts = 2, 8
	for i := range runtimes {
		var p pc.Project
		a.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{Name: fmt.Sprintf("p%d", i)}).Decode(t, &p)
		path := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID + "/start"
		answers := make([]servertest.Response, starts)
		var wg sync.WaitGroup
		for j := range starts {
			env := []*servertest.Env{a, b}[j%2]
			wg.Go(func() { answers[j] = env.Do(t, "POST", path, nil) })
		}
		wg.Wait()
		won := 0
		for _, r := range answers {
			switch {
			case r.Status == 200:
				won++
			case r.Status != 409 || r.Code() != "runtime_already_running":
				t.Errorf("a losing start = %d %s; want 409 runtime_already_running", r.Status, r.Body)
			}
		}
		if won != 1 {
			t.Errorf("runtime %d: %d of %d starts answered 200, want 1", i, won, starts)
		}
	}
	if c, n := prov.Calls(fake.OpCreate), prov.Count(); c != runtimes || n != runtimes {
		t.Fatalf("the provider was asked to create %d computes and holds %d; want %d of each", c, n, runtimes)
	}
}
