package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// call makes one request with the admin key and returns the status and body.
func call(t *testing.T, url, key, method, path, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func mustCall(t *testing.T, url, key, method, path, body string, want int) []byte {
	t.Helper()
	status, b := call(t, url, key, method, path, body)
	if status != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, status, b, want)
	}
	return b
}

// TestSeveralProvidersMetricsAndReadiness runs a server with two named
// providers (one that cannot pause): capabilities list both with their own
// matrix, a runtime picks one by name and gets its behaviour, readiness
// names each check, and /metrics carries the series the dashboard charts.
func TestSeveralProvidersMetricsAndReadiness(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir, "127.0.0.1:0")
	cfg.BootstrapKey = "pdk_" + strings.Repeat("0a", 24)
	cfg.Provider = "main"
	cfg.Providers = []config.ProviderConfig{
		{Name: "main", Kind: "fake"},
		{Name: "frozen", Kind: "fake", NoPause: true, NoSnapshot: true},
	}
	cfg.WarmPool = 1 // the default template keeps one warm sandbox
	url, _, _ := serve(t, cfg)
	key := cfg.BootstrapKey

	var caps client.Capabilities
	mustJSON(t, mustCall(t, url, key, "GET", "/api/capabilities", "", 200), &caps)
	if caps.DefaultProvider != "main" || len(caps.Providers) != 2 || !caps.Providers["main"].Pause || caps.Providers["frozen"].Pause || caps.Providers["frozen"].Snapshot {
		t.Fatalf("capabilities = %+v; want main (pauses) and frozen (neither pauses nor snapshots)", caps)
	}

	mustCall(t, url, key, "POST", "/api/v1/orgs", `{"name":"acme"}`, 201)
	mustCall(t, url, key, "POST", "/api/v1/org/acme/ws", `{"name":"dev"}`, 201)
	status, b := call(t, url, key, "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"x","runtime":{"provider":"nosuch"}}`)
	if status != 400 || !strings.Contains(string(b), "unknown_provider") {
		t.Fatalf("a project on an unknown provider = %d %s, want 400 unknown_provider", status, b)
	}
	status, b = call(t, url, key, "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"rw","runtime":{"provider":"frozen","rootfs":"writable"}}`)
	if status != 422 || !strings.Contains(string(b), "rootfs_not_supported") {
		t.Fatalf("a writable root on a provider that can keep none = %d %s, want 422 rootfs_not_supported", status, b)
	}

	var frozen, main client.Project
	mustJSON(t, mustCall(t, url, key, "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"f","runtime":{"provider":"frozen"}}`, 201), &frozen)
	mustJSON(t, mustCall(t, url, key, "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"m"}`, 201), &main)
	rt := "/api/v1/org/acme/ws/dev/runtimes/"
	mustCall(t, url, key, "POST", rt+frozen.RuntimeID+"/start", "", 200)
	mustCall(t, url, key, "POST", rt+main.RuntimeID+"/start", "", 200)
	var paused client.Runtime
	mustJSON(t, mustCall(t, url, key, "POST", rt+frozen.RuntimeID+"/pause", "", 200), &paused)
	if paused.Status != "archived" || paused.Config.Provider != "frozen" {
		t.Fatalf("pausing on the provider that cannot = %s on %s, want archived on frozen", paused.Status, paused.Config.Provider)
	}

	var provs client.List[client.Provision]
	mustJSON(t, mustCall(t, url, key, "GET", "/api/provisions", "", 200), &provs)
	seen := map[string]client.Provision{}
	for _, p := range provs.Items {
		seen[p.RuntimeID] = p
	}
	for _, id := range []string{frozen.RuntimeID, main.RuntimeID} {
		p, ok := seen[id]
		if !ok || p.State != "succeeded" || p.Kind != "start" || p.EndedAt == nil || p.SandboxID == "" {
			t.Fatalf("provision of %s = %+v (found %v); want a succeeded start", id, p, ok)
		}
		var names []string
		for _, st := range p.Steps {
			names = append(names, st.Name)
		}
		got := strings.Join(names, ",")
		if got != "resolve_secrets,reserve,create,record,start,mark_running" && got != "resolve_secrets,reserve,relabel,resume,mark_running" {
			t.Fatalf("provision steps of %s = %s", id, got)
		}
	}
	if status, _ := call(t, url, "", "GET", "/api/provisions", ""); status != 401 {
		t.Fatalf("provisions without a key = %d, want 401", status)
	}

	// A sandbox's logs: the fake keeps no agent log, and says so; a bad
	// tail is a 400 with its code.
	var logsOf client.SandboxLogs
	sbPath := "/api/v1/org/acme/sandboxes/" + seen[main.RuntimeID].SandboxID + "/logs"
	mustJSON(t, mustCall(t, url, key, "GET", sbPath+"?tail=5", "", 200), &logsOf)
	if len(logsOf.Lifecycle) == 0 || logsOf.Lifecycle[0].Message != "sandbox created" || !strings.Contains(logsOf.AgentError, "agent_log_not_supported") {
		t.Fatalf("sandbox logs = %+v", logsOf)
	}
	if status, b := call(t, url, key, "GET", sbPath+"?tail=0", ""); status != 400 || !strings.Contains(string(b), "invalid_tail") {
		t.Fatalf("tail=0 = %d %s, want 400 invalid_tail", status, b)
	}

	var ready client.Readiness
	mustJSON(t, mustCall(t, url, "", "GET", "/readyz", "", 200), &ready)
	names := map[string]bool{}
	for _, c := range ready.Checks {
		names[c.Name] = c.OK
	}
	for _, n := range []string{"store", "reconciliation", "provider:main", "provider:frozen"} {
		if ok, seen := names[n]; !seen || !ok {
			t.Fatalf("readiness checks = %+v; want %s present and passing", ready.Checks, n)
		}
	}

	// The warm pool is filled in the background: wait for its sandbox.
	var text string
	testenv.WaitFor(t, "the warm pool's sandbox in /metrics", func() bool {
		text = string(mustCall(t, url, "", "GET", "/metrics", "", 200))
		return strings.Contains(text, `paddock_warm_pool_sandboxes{`)
	})
	for _, series := range []string{
		`paddock_http_requests_total{method="POST",route="POST /api/v1/orgs",status="201"} 1`,
		`paddock_http_request_duration_seconds_count{method="GET",route="GET /api/capabilities"} 1`,
		`paddock_lifecycle_transitions_total{action="start",result="ok"} 2`,
		`paddock_lifecycle_transitions_total{action="archive",result="ok"} 1`,
		`paddock_lifecycle_transition_duration_seconds_count{action="start"} 2`,
		`paddock_sandboxes{provider="main",state="running"} 1`,
		`paddock_warm_pool_claims_total{result="miss"}`,
		`paddock_credits_deducted_total 0`,
		`paddock_provider_errors_total{op="create",provider="frozen"} 0`,
		`paddock_provider_breaker_state{provider="main"} 0`,
		`paddock_agent_reconnects_total 0`,
	} {
		if !strings.Contains(text, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	// The shipped dashboard charts only series the server exports.
	dash, err := os.ReadFile("../../deploy/grafana/paddock.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`paddock_[a-z_]+`).FindAllString(string(dash), -1) {
		if !strings.Contains(text, "\n"+name) {
			t.Errorf("the dashboard charts %s, which /metrics does not export", name)
		}
	}
	if strings.Contains(text, main.RuntimeID) {
		t.Error("/metrics names a runtime: route labels must be patterns, not paths")
	}
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}
