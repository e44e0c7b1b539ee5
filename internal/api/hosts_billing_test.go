package api_test

import (
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestHostCostPerHour: a sandbox on a machine with a cost per hour is
// billed that, per second, by the settler, in place of the resource rate
// (which would charge it something else); the runtime shows it as its
// credits per hour.
func TestHostCostPerHour(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	m := testenv.StartSSHHost(t)
	m.Engine.LoadImage(t, testenv.TestImage)
	var mu sync.Mutex
	clock := time.Now().UTC().Truncate(time.Second)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	env := servertest.New(t, servertest.Options{
		ShimPath: testenv.Binary(t, "paddock-shim"), Image: testenv.TestImage, Now: now, NewOrgMicros: 100 * ledger.MicrosPerCredit,
		Pricing: &ledger.Pricing{Default: ledger.Rate{CPUMicros: 280, MemoryMicros: 70}, FirstSlice: time.Minute},
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	req := addHostRequest(t, m, "box")
	req.CostPerHour = 3.6 // 1000 micro-credits a second
	var h client.Host
	env.Must(t, 201, "POST", hostsPath, req).Decode(t, &h)
	if h.CostPerHour != 3.6 {
		t.Fatalf("registered %+v", h)
	}

	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p",
		Runtime: &client.RuntimeConfig{Provider: "box", CPUMillis: 1000, MemoryMB: 128, PidsLimit: 64, DiskMB: 64}}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	var rt client.Runtime
	env.Must(t, 200, "POST", rtPath+"/start", client.StartRuntimeRequest{}).Decode(t, &rt)
	if rt.CreditsPerHour != 3.6 {
		t.Fatalf("credits per hour %v, want the machine's 3.6 (the resource rate would be %v)", rt.CreditsPerHour,
			ledger.Credits(ledger.Pricing{Default: ledger.Rate{CPUMicros: 280, MemoryMicros: 70}}.ClassOf("box", 1000, 128).PerHour()))
	}

	mu.Lock()
	clock = clock.Add(time.Hour)
	mu.Unlock()
	if _, err := env.Ledger.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	sb, err := env.Store.GetSandbox(t.Context(), rt.CurrentSandboxID)
	if err != nil {
		t.Fatal(err)
	}
	if sb.BilledMicros != 3_600_000 {
		t.Fatalf("an hour on the machine billed %d micro-credits, want 3600000", sb.BilledMicros)
	}
}
