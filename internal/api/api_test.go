package api_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// setup creates org "acme", workspace "dev" and project "p1" and returns
// the env and the project's runtime path.
func setup(t *testing.T) (*servertest.Env, client.Project, string) {
	t.Helper()
	env := servertest.New(t, servertest.Options{})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}).Decode(t, &p)
	return env, p, "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
}

func runtimeOf(t *testing.T, r servertest.Response) client.Runtime {
	t.Helper()
	var rt client.Runtime
	r.Decode(t, &rt)
	return rt
}

func TestRuntimeLifecycle(t *testing.T) {
	env, p, rtPath := setup(t)

	// Creating a project created its runtime, idle, with no compute.
	rt := runtimeOf(t, env.Must(t, 200, "GET", rtPath, nil))
	if rt.Status != client.RuntimeIdle || rt.CurrentSandboxID != "" || rt.ProjectID != p.ID {
		t.Fatalf("new runtime = %+v, want idle without sandbox", rt)
	}
	if n := env.Fake.Count(); n != 0 {
		t.Fatalf("compute before start = %d, want 0", n)
	}

	// An unknown secret starts nothing; a known one is resolved to its id.
	env.Must(t, 404, "POST", rtPath+"/start", client.StartRuntimeRequest{SecretIDs: []string{"gh-token"}})
	if n := env.Fake.Count(); n != 0 {
		t.Fatalf("compute after a start with an unknown secret = %d, want 0", n)
	}
	var gh client.Secret
	env.Must(t, 201, "POST", "/api/v1/org/acme/secrets", client.CreateSecretRequest{Name: "gh-token", Value: "ghp_x"}).Decode(t, &gh)
	rt = runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/start", client.StartRuntimeRequest{SecretIDs: []string{"gh-token"}}))
	if rt.Status != client.RuntimeRunning || rt.CurrentSandboxID == "" || rt.ExpiresAt == nil {
		t.Fatalf("started runtime = %+v", rt)
	}
	var sb client.Sandbox
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+rt.CurrentSandboxID, nil).Decode(t, &sb)
	if sb.Kind != client.KindRuntime || sb.State != client.SandboxRunning || sb.RuntimeID != rt.ID ||
		sb.Provider != "fake" || sb.ProviderSandboxID == "" || sb.StartedAt == nil ||
		len(sb.SecretIDs) != 1 || sb.SecretIDs[0] != gh.ID {
		t.Fatalf("ledger row = %+v", sb)
	}
	if sb.BilledCredits != 0 || sb.RunningCredits != 0 || sb.EstimatedTotalCredits != 0 {
		t.Fatalf("credits = %v/%v/%v, want zeros", sb.BilledCredits, sb.RunningCredits, sb.EstimatedTotalCredits)
	}
	// Looked up by the provider's id too.
	var byProvider client.Sandbox
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+sb.ProviderSandboxID, nil).Decode(t, &byProvider)
	if byProvider.ID != sb.ID {
		t.Fatalf("by provider id = %s, want %s", byProvider.ID, sb.ID)
	}

	rt = runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/pause", nil))
	if rt.Status != client.RuntimePaused || rt.PauseReason != client.PauseUser {
		t.Fatalf("paused runtime = %+v", rt)
	}
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+sb.ID, nil).Decode(t, &sb)
	if sb.State != client.SandboxPaused || sb.PauseReason != client.PauseUser || sb.PausedAt == nil {
		t.Fatalf("paused row = %+v", sb)
	}

	rt = runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/resume", nil))
	if rt.Status != client.RuntimeRunning || rt.PauseReason != "" {
		t.Fatalf("resumed runtime = %+v", rt)
	}

	before := *rt.ExpiresAt
	rt = runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/keepalive", client.KeepaliveRequest{DurationSeconds: 7200}))
	if !rt.ExpiresAt.After(before) || rt.ExpiresAt.Sub(time.Now()) < 7100*time.Second {
		t.Fatalf("keepalive: expires_at %v, before %v", rt.ExpiresAt, before)
	}
	// A shorter keepalive never shortens the window.
	extended := *rt.ExpiresAt
	rt = runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/keepalive", nil))
	if !rt.ExpiresAt.Equal(extended) {
		t.Fatalf("keepalive shortened expires_at from %v to %v", extended, rt.ExpiresAt)
	}

	rt = runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/reset", nil))
	if rt.Status != client.RuntimeIdle || rt.CurrentSandboxID != "" || rt.ID != p.RuntimeID {
		t.Fatalf("reset runtime = %+v", rt)
	}
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+sb.ID, nil).Decode(t, &sb)
	if sb.State != client.SandboxKilled || sb.KillReason != "reset" || sb.KilledAt == nil {
		t.Fatalf("reset row = %+v", sb)
	}
	if n := env.Fake.Count(); n != 0 {
		t.Fatalf("live compute after reset = %d, want 0", n)
	}

	// A second start makes a second row; the first stays.
	rt = runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/start", nil))
	var list client.List[client.Sandbox]
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?runtime_id="+rt.ID, nil).Decode(t, &list)
	if len(list.Items) != 2 || list.Items[0].ID != rt.CurrentSandboxID || list.Items[1].ID != sb.ID {
		t.Fatalf("ledger for runtime = %+v, want newest first [%s %s]", list.Items, rt.CurrentSandboxID, sb.ID)
	}
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?state=killed", nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != sb.ID {
		t.Fatalf("killed filter = %+v", list.Items)
	}

	// Killing the live sandbox through the ledger unlinks the runtime.
	var killed client.Sandbox
	env.Must(t, 200, "DELETE", "/api/v1/org/acme/sandboxes/"+rt.CurrentSandboxID, nil).Decode(t, &killed)
	if killed.State != client.SandboxKilled || killed.KillReason != "deleted" {
		t.Fatalf("killed row = %+v", killed)
	}
	rt = runtimeOf(t, env.Must(t, 200, "GET", rtPath, nil))
	if rt.Status != client.RuntimeIdle || rt.CurrentSandboxID != "" {
		t.Fatalf("runtime after kill = %+v", rt)
	}
	// Killing again is idempotent; the row stays.
	env.Must(t, 200, "DELETE", "/api/v1/org/acme/sandboxes/"+killed.ID, nil)
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+killed.ID, nil)
}

func TestActionsThatDoNotFit(t *testing.T) {
	env, _, rtPath := setup(t)
	for _, action := range []string{"pause", "resume", "reset", "keepalive"} {
		r := env.Must(t, 409, "POST", rtPath+"/"+action, nil)
		if r.Code() != "runtime_has_no_sandbox" {
			t.Errorf("%s on idle: code %q, want runtime_has_no_sandbox", action, r.Code())
		}
	}
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	for action, code := range map[string]string{"start": "runtime_already_running", "resume": "runtime_not_paused"} {
		if r := env.Must(t, 409, "POST", rtPath+"/"+action, nil); r.Code() != code {
			t.Errorf("%s on running: code %q, want %s", action, r.Code(), code)
		}
	}
	env.Must(t, 200, "POST", rtPath+"/pause", nil)
	for action, code := range map[string]string{"start": "runtime_already_running", "pause": "runtime_already_paused"} {
		if r := env.Must(t, 409, "POST", rtPath+"/"+action, nil); r.Code() != code {
			t.Errorf("%s on paused: code %q, want %s", action, r.Code(), code)
		}
	}
	// A paused runtime can be reset.
	env.Must(t, 200, "POST", rtPath+"/reset", nil)
}

func TestConcurrentStartsProvisionOnce(t *testing.T) {
	env, _, rtPath := setup(t)
	const n = 20
	codes := env.Concurrently(t, n, rtPath+"/start")
	if codes[200] != 1 || codes[409] != n-1 {
		t.Fatalf("status counts = %v, want one 200 and %d 409", codes, n-1)
	}
	if c := env.Fake.Count(); c != 1 {
		t.Fatalf("live compute = %d, want 1", c)
	}
	var list client.List[client.Sandbox]
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes", nil).Decode(t, &list)
	if len(list.Items) != 1 {
		t.Fatalf("ledger rows = %d, want 1", len(list.Items))
	}
}

func TestStartFailureLeavesNothing(t *testing.T) {
	for _, op := range []string{"create", "start"} {
		t.Run(op, func(t *testing.T) {
			env, _, rtPath := setup(t)
			env.Fake.FailNext(op, errdefs.Unavailable("engine_down", "the engine is down").WithCause(errors.New("connection refused")))
			r := env.Do(t, "POST", rtPath+"/start", nil)
			if r.Status != 503 || r.Code() != "engine_down" {
				t.Fatalf("start = %d %s, want 503 engine_down", r.Status, r.Body)
			}
			if strings.Contains(string(r.Body), "connection refused") {
				t.Fatalf("internal cause leaked to the client: %s", r.Body)
			}
			if c := env.Fake.Count(); c != 0 {
				t.Fatalf("compute left behind = %d", c)
			}
			rt := runtimeOf(t, env.Must(t, 200, "GET", rtPath, nil))
			if rt.Status != client.RuntimeError || rt.StatusReason == "" || rt.CurrentSandboxID != "" {
				t.Fatalf("runtime after failed start = %+v", rt)
			}
			var list client.List[client.Sandbox]
			env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes", nil).Decode(t, &list)
			if len(list.Items) != 1 || list.Items[0].State != client.SandboxKilled || list.Items[0].KillReason != "provision_failed" || list.Items[0].Error == "" {
				t.Fatalf("ledger after failed start = %+v", list.Items)
			}
			// Start refuses until reset; reset recovers.
			if r := env.Must(t, 409, "POST", rtPath+"/start", nil); r.Code() != "runtime_in_error" {
				t.Fatalf("start in error: %s", r.Body)
			}
			rt = runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/reset", nil))
			if rt.Status != client.RuntimeIdle {
				t.Fatalf("reset from error = %+v", rt)
			}
			env.Must(t, 200, "POST", rtPath+"/start", nil)
		})
	}
}

func TestProjects(t *testing.T) {
	env, p, rtPath := setup(t)
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/projects/p1", nil)
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/projects/"+p.ID, nil)
	if r := env.Must(t, 409, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p1"}); r.Code() != "project_exists" {
		t.Fatalf("duplicate project: %s", r.Body)
	}
	var list client.List[client.Project]
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/projects", nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].RuntimeID != p.RuntimeID {
		t.Fatalf("projects = %+v", list.Items)
	}
	var rts client.List[client.Runtime]
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes", nil).Decode(t, &rts)
	if len(rts.Items) != 1 || rts.Items[0].ID != p.RuntimeID {
		t.Fatalf("runtimes = %+v", rts.Items)
	}

	// Deleting a project with a running sandbox kills it; the row stays.
	rt := runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/start", nil))
	env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/p1", nil)
	env.Must(t, 404, "GET", "/api/v1/org/acme/ws/dev/projects/p1", nil)
	env.Must(t, 404, "GET", rtPath, nil)
	if c := env.Fake.Count(); c != 0 {
		t.Fatalf("compute after project delete = %d", c)
	}
	var sb client.Sandbox
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+rt.CurrentSandboxID, nil).Decode(t, &sb)
	if sb.State != client.SandboxKilled || sb.KillReason != "project_deleted" {
		t.Fatalf("row after project delete = %+v", sb)
	}
}

func TestRuntimeConfig(t *testing.T) {
	env, _, _ := setup(t)
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{
		Name:    "custom",
		Runtime: &client.RuntimeConfig{Image: "example/agent:1", CPUMillis: 500, MemoryMB: 256, IdleTimeoutSeconds: 60},
	}).Decode(t, &p)
	rt := runtimeOf(t, env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil))
	c := rt.Config
	if c.Image != "example/agent:1" || c.CPUMillis != 500 || c.MemoryMB != 256 || c.IdleTimeoutSeconds != 60 || c.Provider != "fake" || c.Network == nil || c.Network.Mode != "none" || c.PidsLimit == 0 {
		t.Fatalf("config = %+v", c)
	}
	env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil)
	var list client.List[client.Sandbox]
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?runtime_id="+p.RuntimeID, nil).Decode(t, &list)
	if got := list.Items[0]; got.Image != "example/agent:1" || got.Resources.CPUMillis != 500 || got.Resources.MemoryMB != 256 {
		t.Fatalf("row = %+v", got)
	}
}

// TestBadInput sends malformed requests: each gets its 4xx and stable code,
// never a 500.
func TestBadInput(t *testing.T) {
	env, _, rtPath := setup(t)
	huge := `{"name":"` + strings.Repeat("a", 2<<20) + `"}`
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"malformed json", "POST", "/api/v1/orgs", `{"name":`, 400, "malformed_json"},
		{"not an object", "POST", "/api/v1/orgs", `[1,2]`, 400, "malformed_json"},
		{"two objects", "POST", "/api/v1/orgs", `{"name":"a"}{"name":"b"}`, 400, "malformed_json"},
		{"unknown field", "POST", "/api/v1/orgs", `{"name":"x","owner":"me"}`, 400, "unknown_field"},
		{"wrong type", "POST", "/api/v1/orgs", `{"name":42}`, 400, "invalid_field_type"},
		{"missing body", "POST", "/api/v1/orgs", nil, 400, "missing_body"},
		{"huge body", "POST", "/api/v1/orgs", huge, 413, "body_too_large"},
		{"bad org name", "POST", "/api/v1/orgs", `{"name":"Not A Slug"}`, 400, "invalid_name"},
		{"empty org name", "POST", "/api/v1/orgs", `{"name":""}`, 400, "invalid_name"},
		{"duplicate org", "POST", "/api/v1/orgs", `{"name":"acme"}`, 409, "org_exists"},
		{"org path shape", "GET", "/api/v1/org/ACME!", nil, 400, "invalid_org"},
		{"unknown org", "GET", "/api/v1/org/nope", nil, 404, "org_not_found"},
		{"unknown workspace", "GET", "/api/v1/org/acme/ws/nope", nil, 404, "workspace_not_found"},
		{"runtime id shape", "GET", "/api/v1/org/acme/ws/dev/runtimes/not-a-uuid", nil, 400, "invalid_runtime_id"},
		{"unknown runtime", "POST", "/api/v1/org/acme/ws/dev/runtimes/00000000-0000-4000-8000-000000000000/start", nil, 404, "runtime_not_found"},
		{"sandbox id shape", "GET", "/api/v1/org/acme/sandboxes/%2e%2e%2f", nil, 400, "invalid_sandbox_id"},
		{"unknown sandbox", "GET", "/api/v1/org/acme/sandboxes/deadbeef", nil, 404, "sandbox_not_found"},
		{"start body wrong type", "POST", rtPath + "/start", `{"secret_ids":"one"}`, 400, "invalid_field_type"},
		{"start unknown field", "POST", rtPath + "/start", `{"image":"x"}`, 400, "unknown_field"},
		{"bad secret id", "POST", rtPath + "/start", `{"secret_ids":["../etc"]}`, 400, "invalid_secret_ids"},
		{"negative keepalive", "POST", rtPath + "/keepalive", `{"duration_seconds":-5}`, 400, "invalid_duration"},
		{"bad limit", "GET", "/api/v1/org/acme/sandboxes?limit=0", nil, 400, "invalid_limit"},
		{"limit not a number", "GET", "/api/v1/orgs?limit=ten", nil, 400, "invalid_limit"},
		{"bad cursor", "GET", "/api/v1/org/acme/sandboxes?cursor=garbage!!", nil, 400, "invalid_cursor"},
		{"bad state filter", "GET", "/api/v1/org/acme/sandboxes?state=zombie", nil, 400, "invalid_filter"},
		{"bad runtime filter", "GET", "/api/v1/org/acme/sandboxes?runtime_id=x", nil, 400, "invalid_filter"},
		{"bad resources", "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"r","runtime":{"memory_mb":1}}`, 400, "invalid_resources"},
		{"bad network", "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"r","runtime":{"network":"wide"}}`, 400, "invalid_network"},
		{"bad idle timeout", "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"r","runtime":{"idle_timeout_seconds":3}}`, 400, "invalid_idle_timeout"},
		{"bad max lifetime", "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"r","runtime":{"max_lifetime_seconds":-1}}`, 400, "invalid_max_lifetime"},
		{"huge max lifetime", "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"r","runtime":{"max_lifetime_seconds":99999999999}}`, 400, "invalid_max_lifetime"},
		{"bad archive after", "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"r","runtime":{"archive_after_seconds":5}}`, 400, "invalid_archive_after"},
		{"bad image", "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"r","runtime":{"image":"--privileged"}}`, 400, "invalid_image"},
		{"unknown provider", "POST", "/api/v1/org/acme/ws/dev/projects", `{"name":"r","runtime":{"provider":"mars"}}`, 400, "unknown_provider"},
		{"wrong content type", "POST", "/api/v1/orgs", "name=x", 415, "unsupported_media_type"},
		{"unknown route", "GET", "/api/v1/nothing", nil, 404, "route_not_found"},
		{"wrong method", "PUT", "/api/v1/orgs", nil, 405, "method_not_allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r servertest.Response
			if tc.name == "wrong content type" {
				r = postForm(t, env, tc.path, tc.body.(string))
			} else {
				r = env.Do(t, tc.method, tc.path, tc.body)
			}
			if r.Status != tc.status || r.Code() != tc.code {
				t.Fatalf("%s %s = %d %s, want %d %s", tc.method, tc.path, r.Status, r.Body, tc.status, tc.code)
			}
			var e client.Error
			if err := json.Unmarshal(r.Body, &e); err != nil || e.Message == "" || e.RequestID == "" {
				t.Fatalf("error body %s is not the one error envelope", r.Body)
			}
		})
	}
}

func postForm(t *testing.T, env *servertest.Env, path, body string) servertest.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", env.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+env.Key)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return servertest.Response{Status: resp.StatusCode, Body: b}
}

func TestAuth(t *testing.T) {
	env, _, _ := setup(t)
	for _, tc := range []struct {
		name, key, code string
	}{
		{"no key", "", "missing_api_key"},
		{"malformed key", "hello", "invalid_api_key"},
		{"unknown key", "pdk_" + strings.Repeat("0", 48), "invalid_api_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.DoKey(t, tc.key, "GET", "/api/v1/orgs", nil)
			if r.Status != 401 || r.Code() != tc.code {
				t.Fatalf("= %d %s, want 401 %s", r.Status, r.Body, tc.code)
			}
		})
	}
	// Health and the OpenAPI document need no key.
	if r := env.DoKey(t, "", "GET", "/health", nil); r.Status != 200 {
		t.Fatalf("health = %d", r.Status)
	}
	if r := env.DoKey(t, "", "GET", "/api/openapi.json", nil); r.Status != 200 {
		t.Fatalf("openapi = %d", r.Status)
	}
}
