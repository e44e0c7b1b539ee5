package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestStructuredLogsAndSandboxLogs drives the built binaries: the server
// logs one JSON object per line, lifecycle lines carry the request, runtime
// and sandbox ids, and `paddock sandbox logs` (by provider id) shows the
// sandbox's lifecycle and what its agent wrote.
func TestStructuredLogsAndSandboxLogs(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	bin := testenv.Binary(t, "paddock")
	shim := testenv.Binary(t, "paddock-shim")
	instance := testenv.Instance(t)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	const key = "pdk_0123456789abcdef0123456789abcdef0123456789ab1095"
	s := serveIn(t, bin, shim, t.TempDir(), testenv.ShortTempDir(t)+"/r", instance, key, "PADDOCK_LOG_LEVEL=info")

	s.cli(t, bin, key, "org", "create", "acme")
	s.cli(t, bin, key, "workspace", "create", "dev", "--org", "acme")
	p := decodeJSON[pc.Project](t, s.cli(t, bin, key, "project", "create", "p1", "--org", "acme", "--ws", "dev", "--memory", "128", "-o", "json"))
	rt := decodeJSON[pc.Runtime](t, s.cli(t, bin, key, "runtime", "start", p.RuntimeID, "--org", "acme", "--ws", "dev", "-o", "json"))
	s.cli(t, bin, key, "runtime", "pause", p.RuntimeID, "--org", "acme", "--ws", "dev")
	sb := decodeJSON[pc.Sandbox](t, s.cli(t, bin, key, "sandbox", "get", rt.CurrentSandboxID, "--org", "acme", "-o", "json"))

	out := s.cli(t, bin, key, "sandbox", "logs", sb.ProviderSandboxID[:12], "--org", "acme")
	for _, want := range []string{
		"# lifecycle of sandbox " + sb.ID,
		"sandbox created", "runtime started", "sandbox paused", "pause_reason=user",
		"# agent", "paddock-shim serving",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sandbox logs lack %q:\n%s", want, out)
		}
	}

	// Every line of the server's log is a JSON object; the start's carries
	// the ids.
	var started map[string]any
	for line := range strings.Lines(s.logs.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		if rec["msg"] == "runtime started" {
			started = rec
		}
	}
	if started == nil || started["runtime"] != p.RuntimeID || started["sandbox"] != sb.ID || started["request_id"] == nil || started["request_id"] == "" {
		t.Fatalf("the start's log line = %v; want runtime %s, sandbox %s and a request id", started, p.RuntimeID, sb.ID)
	}
}
