package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestWarmPoolRunning: a pool that keeps its sandboxes running holds them
// running (not paused) between claims, reconciliation keeps them, and a
// start claims one without resuming it: the first command goes over the
// link opened when the pool was filled.
func TestWarmPoolRunning(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	e := newLifeEnv(t, servertest.Options{
		WarmPools: []runtime.WarmPool{{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64, Size: 1, Running: true}},
		Pricing:   &ledger.Pricing{Default: ledger.Rate{CPUMicros: 1000}, FirstSlice: time.Minute}, NewOrgMicros: 1_000_000_000,
	})
	ctx := t.Context()
	if made, err := e.env.Runtimes.FillWarmPools(ctx); err != nil || made != 1 {
		t.Fatalf("FillWarmPools = %d, %v", made, err)
	}
	warm, err := e.env.Store.ListWarmSandboxes(ctx)
	if err != nil || len(warm) != 1 {
		t.Fatalf("warm sandboxes: %+v, %v", warm, err)
	}
	cli := testenv.DockerClient(t)
	state := func() (running, paused bool) {
		c, err := cli.ContainerInspect(ctx, warm[0].ProviderSandboxID)
		if err != nil {
			t.Fatal(err)
		}
		return c.State.Running, c.State.Paused
	}
	if running, paused := state(); !running || paused {
		t.Fatalf("warm container running=%v paused=%v, want running", running, paused)
	}
	if discarded, err := e.env.Runtimes.ReconcileWarm(ctx); err != nil || discarded != 0 {
		t.Fatalf("ReconcileWarm = %d, %v; want the running warm sandbox kept", discarded, err)
	}

	rid := e.project(t, "p", pc.RuntimeConfig{})
	var rt pc.Runtime
	e.env.Must(t, 200, "POST", rtPath(rid)+"/start", nil).Decode(t, &rt)
	if rt.CurrentSandboxID != warm[0].ID {
		t.Fatalf("start took sandbox %s, want the warm %s", rt.CurrentSandboxID, warm[0].ID)
	}
	res, err := e.sdk.Exec(ctx, "acme", "dev", rid, pc.ExecRequest{Argv: []string{"sh", "-c", "echo hi > /workspace/f && cat /workspace/f"}})
	if err != nil || res.Exit == nil || res.Exit.Code != 0 || string(res.Stdout) != "hi\n" {
		t.Fatalf("first exec: %+v, %v", res, err)
	}
	// The claim, one transaction here, held the first charge and captured
	// it: one hold and one charge of the same key's suffix, nothing
	// released.
	var journal pc.List[pc.CreditEntry]
	e.env.Must(t, 200, "GET", "/api/v1/org/acme/credits/journal?limit=500", nil).Decode(t, &journal)
	keys := map[string]string{} // prefix → suffix
	for _, j := range journal.Items {
		if j.SandboxID == warm[0].ID {
			prefix, suffix, _ := strings.Cut(j.IdempotencyKey, ":")
			if _, twice := keys[prefix]; twice {
				t.Fatalf("two %s entries for the claimed sandbox: %+v", prefix, journal.Items)
			}
			keys[prefix] = suffix
		}
	}
	if len(keys) != 2 || keys["hold"] == "" || keys["hold"] != keys["charge"] {
		t.Fatalf("the claimed sandbox's journal keys %v, want one hold and the charge that captured it", keys)
	}
	// The runtime's later life is a runtime's: it pauses and resumes.
	e.env.Must(t, 200, "POST", rtPath(rid)+"/pause", nil)
	if _, paused := state(); !paused {
		t.Fatal("the claimed sandbox did not pause")
	}
	e.env.Must(t, 200, "POST", rtPath(rid)+"/resume", nil)
	if res, err := e.sdk.Exec(ctx, "acme", "dev", rid, pc.ExecRequest{Argv: []string{"cat", "/workspace/f"}}); err != nil || string(res.Stdout) != "hi\n" {
		t.Fatalf("exec after resume: %+v, %v", res, err)
	}
}
