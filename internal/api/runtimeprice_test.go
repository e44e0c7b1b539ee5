package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestRuntimeCreditsPerHour: every answer that renders a runtime (get,
// list, an action, a PATCH) says what an hour of its compute costs at the
// installation's prices for its provider and resources, running or not,
// and follows a change of its resources.
func TestRuntimeCreditsPerHour(t *testing.T) {
	env := servertest.New(t, servertest.Options{Pricing: &ledger.Pricing{
		Default:    ledger.Rate{CPUMicros: 1, MemoryMicros: 1},
		Providers:  map[string]ledger.Rate{fake.Name: {CPUMicros: 280, MemoryMicros: 70}},
		FirstSlice: time.Minute,
	}, NewOrgMicros: 1000 * ledger.MicrosPerCredit})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{
		Name: "p1", Runtime: &client.RuntimeConfig{CPUMillis: 2000, MemoryMB: 2048},
	}).Decode(t, &p)
	path := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID

	// Two cores at 280 and two GiB at 70 micro-credits a second: 2.52 an hour.
	const want = 2.52
	if rt := runtimeOf(t, env.Must(t, 200, "GET", path, nil)); rt.CreditsPerHour != want {
		t.Fatalf("idle: credits_per_hour = %v, want %v", rt.CreditsPerHour, want)
	}
	var list client.RuntimeList
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes", nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].CreditsPerHour != want {
		t.Fatalf("list = %+v, want one runtime at %v an hour", list.Items, want)
	}
	if rt := runtimeOf(t, env.Must(t, 200, "POST", path+"/start", nil)); rt.CreditsPerHour != want {
		t.Fatalf("started: credits_per_hour = %v, want %v", rt.CreditsPerHour, want)
	}

	// One core and two GiB: (280 + 140) × 3600 micro-credits.
	one := int64(1000)
	var up client.RuntimeUpdate
	env.Must(t, 200, "PATCH", path, client.RuntimePatch{CPUMillis: &one}).Decode(t, &up)
	if up.Runtime.CreditsPerHour != 1.512 {
		t.Fatalf("after PATCH: credits_per_hour = %v, want 1.512", up.Runtime.CreditsPerHour)
	}
}

// TestRuntimeCreditsPerHourFree: where compute is free the field is there,
// and 0.
func TestRuntimeCreditsPerHourFree(t *testing.T) {
	env, _, path := setup(t)
	r := env.Must(t, 200, "GET", path, nil)
	if !strings.Contains(string(r.Body), `"credits_per_hour":0`) {
		t.Fatalf("free runtime = %s, want credits_per_hour 0", r.Body)
	}
}
