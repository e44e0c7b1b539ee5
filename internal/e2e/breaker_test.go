package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestBreakerWithAStoppedEngine runs paddock on a Docker engine of its own,
// stops that engine and starts it again: while it is down, readiness names
// the provider, calls fail fast with 503 provider_circuit_open and record
// nothing; once it is back the breaker closes by itself and a runtime
// starts.
func TestBreakerWithAStoppedEngine(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	_, hadDocker0 := net.InterfaceByName("docker0")
	engine := testenv.StartDockerd(t)
	// The dedicated engine leaves the host's interfaces alone (one started
	// with --bridge none in the host's namespace deletes docker0).
	if _, err := net.InterfaceByName("docker0"); hadDocker0 == nil && err != nil {
		t.Errorf("the dedicated engine took docker0 away from the host: %v", err)
	}
	// The test image, copied into the dedicated engine.
	save := exec.Command("docker", "save", testenv.TestImage)
	load := exec.Command("docker", "-H", engine.Host, "load")
	pipe, err := save.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	load.Stdin = pipe
	if err := save.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("docker load: %v\n%s", err, out)
	}
	if err := save.Wait(); err != nil {
		t.Fatal(err)
	}

	bin := testenv.Binary(t, "paddock")
	shim := testenv.Binary(t, "paddock-shim")
	instance := testenv.Instance(t)
	const key = "pdk_0123456789abcdef0123456789abcdef0123456789abbeef"
	s := serveIn(t, bin, shim, t.TempDir(), testenv.ShortTempDir(t)+"/r", instance, key, "PADDOCK_DOCKER_HOST="+engine.Host)
	t.Cleanup(func() { s.stop(t) }) // before the engine stops, so the server's compute goes with it
	c := sdkFor(t, s, key)
	ctx := t.Context()
	if _, err := c.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "p", Runtime: &pc.RuntimeConfig{MemoryMB: 128}})
	if err != nil {
		t.Fatal(err)
	}
	providerName, _ := testenv.TestProvider(t)
	check := "provider:" + providerName
	if ok, _ := readiness(t, s.url, check); !ok {
		t.Fatalf("%s not ready before the engine stopped", check)
	}

	engine.Stop(t)
	// Readiness pings the engine through the breaker: the failures open
	// it, and then it answers at once.
	testenv.Eventually(t, func() error {
		if ok, why := readiness(t, s.url, check); ok || !strings.Contains(why, provider.CodeCircuitOpen) {
			return fmt.Errorf("the breaker did not open with the engine stopped; last check: ok=%v %s", ok, why)
		}
		return nil
	})
	// The failures that opened it were counted, and its state exported.
	metrics := scrape(t, s.url)
	if !regexp.MustCompile(`paddock_provider_errors_total\{op="ping",provider="`+providerName+`"\} [1-9]`).MatchString(metrics) ||
		!strings.Contains(metrics, `paddock_provider_breaker_state{provider="`+providerName+`"} 1`) {
		t.Fatalf("/metrics after the engine stopped lacks the ping errors or the open breaker:\n%s", metrics)
	}
	_, err = c.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{})
	if pe := (*pc.Error)(nil); !errors.As(err, &pe) || pe.StatusCode != http.StatusServiceUnavailable || pe.Code != provider.CodeCircuitOpen {
		t.Fatalf("start with the engine stopped = %v, want 503 %s", err, provider.CodeCircuitOpen)
	}
	rt, err := c.GetRuntime(ctx, "acme", "dev", p.RuntimeID)
	if err != nil || rt.Status != pc.RuntimeIdle || rt.CurrentSandboxID != "" {
		t.Fatalf("runtime after a refused start = %+v, %v; want idle with no sandbox", rt, err)
	}
	if rows, err := c.ListSandboxes(ctx, "acme", pc.SandboxFilter{}); err != nil || len(rows.Items) != 0 {
		t.Fatalf("ledger rows after a refused start = %+v, %v; want none", rows, err)
	}

	engine.Start(t)
	// No call closes it: its own probe finds the engine again.
	testenv.Eventually(t, func() error {
		if ok, why := readiness(t, s.url, check); !ok {
			return fmt.Errorf("the breaker did not close after the engine came back: %s", why)
		}
		return nil
	})
	rt, err = c.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{})
	if err != nil || rt.Status != pc.RuntimeRunning {
		t.Fatalf("start after the engine came back = %+v, %v", rt, err)
	}
	if _, err := c.ResetRuntime(ctx, "acme", "dev", p.RuntimeID, pc.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
}

// scrape returns the server's /metrics.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readiness returns whether /readyz's check named name passed, and its
// error when it did not.
func readiness(t *testing.T, url, name string) (bool, string) {
	t.Helper()
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r pc.Readiness
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("readyz: %v", err)
	}
	for _, c := range r.Checks {
		if c.Name == name {
			return c.OK, c.Error
		}
	}
	t.Fatalf("readyz has no check %s: %+v", name, r)
	return false, ""
}
