package api_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestPromptRefusals: what is refused before a harness runs, on a
// runtime without a sandbox: each with its code, and no session made.
func TestPromptRefusals(t *testing.T) {
	env, p, rtPath := setup(t)
	noSessions := func(t *testing.T) {
		t.Helper()
		var list client.List[client.Session]
		env.Must(t, 200, "GET", rtPath+"/sessions", nil).Decode(t, &list)
		ss, _, err := env.Store.ListSessions(context.Background(), p.RuntimeID, store.Page{Limit: 100})
		if len(list.Items) != 0 || len(ss) != 0 || err != nil {
			t.Fatalf("sessions: %+v, in the store %+v, %v", list.Items, ss, err)
		}
	}
	for _, tc := range []struct {
		name    string
		op      string
		body    any
		status  int
		code    string
		message string
	}{
		// The model credential is checked before the runtime is woken.
		{"no credential, default harness", "prompt", client.PromptRequest{Prompt: "hi"}, 422, "harness_secret_missing", "ANTHROPIC_API_KEY"},
		{"no credential, task", "task", client.PromptRequest{Prompt: "hi"}, 422, "harness_secret_missing", "ANTHROPIC_API_KEY"},
		{"no credential, gemini", "prompt", client.PromptRequest{Prompt: "hi", Harness: "gemini"}, 422, "harness_secret_missing", "GEMINI_API_KEY"},
		{"unknown harness", "prompt", client.PromptRequest{Prompt: "hi", Harness: "nope"}, 400, "unknown_harness", "nope"},
		{"empty prompt", "prompt", map[string]any{"prompt": ""}, 400, "invalid_prompt", ""},
		{"blank prompt", "task", client.PromptRequest{Prompt: " \n\t"}, 400, "invalid_prompt", ""},
		{"no prompt", "prompt", map[string]any{}, 400, "invalid_prompt", ""},
		{"a task with a session", "task", client.PromptRequest{Prompt: "hi", SessionID: uuid.NewString()}, 400, "invalid_argument", "session"},
		{"an unknown session", "prompt", client.PromptRequest{Prompt: "hi", SessionID: uuid.NewString()}, 404, "session_not_found", ""},
		{"a prompt over 256 KiB", "prompt", client.PromptRequest{Prompt: strings.Repeat("a", 256<<10+1)}, 400, "invalid_prompt", ""},
		{"a negative timeout", "prompt", client.PromptRequest{Prompt: "hi", TimeoutSeconds: -1}, 400, "invalid_timeout", ""},
		{"a timeout that overflows", "prompt", client.PromptRequest{Prompt: "hi", TimeoutSeconds: 18446744074}, 400, "invalid_timeout", ""},
		{"a timeout past the maximum", "task", client.PromptRequest{Prompt: "hi", TimeoutSeconds: 9223372037}, 400, "invalid_timeout", ""},
		{"an unknown field", "prompt", map[string]any{"prompt": "hi", "agent": "x"}, 400, "unknown_field", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(t, "POST", rtPath+"/"+tc.op, tc.body)
			wantError(t, r, tc.status, tc.code)
			var e client.Error
			r.Decode(t, &e)
			if !strings.Contains(e.Message, tc.message) {
				t.Errorf("message %q does not name %q", e.Message, tc.message)
			}
			noSessions(t)
		})
	}

	// With the credential bound, the idle runtime is the obstacle; it is
	// not started for a prompt.
	env.Must(t, 201, "POST", "/api/v1/org/acme/secrets", client.CreateSecretRequest{Name: "anthropic", Value: "sk-ant-test", Env: "ANTHROPIC_API_KEY"})
	env.Must(t, 200, "PATCH", rtPath, client.RuntimePatch{Secrets: &[]string{"anthropic"}})
	for _, op := range []string{"prompt", "task"} {
		wantError(t, env.Do(t, "POST", rtPath+"/"+op, client.PromptRequest{Prompt: "hi"}), 409, "runtime_not_running")
	}
	// Another harness's credential is still missing.
	wantError(t, env.Do(t, "POST", rtPath+"/prompt", client.PromptRequest{Prompt: "hi", Harness: "gemini"}), 422, "harness_secret_missing")
	// Codex's exec does not read OPENAI_API_KEY: the refusal says so.
	env.Must(t, 201, "POST", "/api/v1/org/acme/secrets", client.CreateSecretRequest{Name: "openai", Value: "sk-test", Env: "OPENAI_API_KEY"})
	env.Must(t, 200, "PATCH", rtPath, client.RuntimePatch{Secrets: &[]string{"anthropic", "openai"}})
	r := env.Do(t, "POST", rtPath+"/prompt", client.PromptRequest{Prompt: "hi", Harness: "codex"})
	wantError(t, r, 422, "harness_secret_missing")
	var e client.Error
	r.Decode(t, &e)
	if !strings.Contains(e.Message, "it has OPENAI_API_KEY, which codex 0.169.0 does not read: inject the same key as CODEX_API_KEY") {
		t.Errorf("codex with OPENAI_API_KEY only: %q", e.Message)
	}
	var rt client.Runtime
	env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
	if rt.Status != client.RuntimeIdle || env.Fake.Count() != 0 {
		t.Fatalf("runtime after refused prompts: %s, %d sandboxes", rt.Status, env.Fake.Count())
	}
	noSessions(t)
	wantError(t, env.Do(t, "GET", rtPath+"/sessions/"+uuid.NewString(), nil), 404, "session_not_found")
	wantError(t, env.Do(t, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+uuid.NewString()+"/sessions", nil), 404, "runtime_not_found")
}

// TestPromptWithoutAnAgent: on a running (or paused) fake runtime with
// the model credential, a turn reaches for the sandbox's agent, which the
// fake does not have: a clean 501, and no session made.
func TestPromptWithoutAnAgent(t *testing.T) {
	env, p, rtPath := setup(t)
	env.Must(t, 201, "POST", "/api/v1/org/acme/secrets", client.CreateSecretRequest{Name: "anthropic", Value: "sk-ant-test", Env: "ANTHROPIC_API_KEY"})
	env.Must(t, 200, "PATCH", rtPath, client.RuntimePatch{Secrets: &[]string{"anthropic"}})
	env.Must(t, 201, "POST", rtPath+"/capabilities", client.InstallCapabilityRequest{Name: "memory"})
	env.Must(t, 200, "POST", rtPath+"/start", nil)

	for _, tc := range []struct {
		name, op string
		accept   []string
	}{
		{"prompt", "prompt", nil},
		{"task", "task", nil},
		{"streamed prompt", "prompt", []string{"Accept", "application/x-ndjson"}},
		{"streamed task", "task", []string{"Accept", "application/x-ndjson"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, code := raw(t, env, "POST", rtPath+"/"+tc.op, "application/json", `{"prompt":"hi"}`, tc.accept...)
			if status != 501 || code != "agent_not_supported" {
				t.Fatalf("%d %s, want 501 agent_not_supported", status, code)
			}
		})
	}
	// The sandbox's secrets decide: one bound after the start is not there.
	env.Must(t, 201, "POST", "/api/v1/org/acme/secrets", client.CreateSecretRequest{Name: "gemini", Value: "g-test", Env: "GEMINI_API_KEY"})
	env.Must(t, 200, "PATCH", rtPath, client.RuntimePatch{Secrets: &[]string{"anthropic", "gemini"}})
	wantError(t, env.Do(t, "POST", rtPath+"/prompt", client.PromptRequest{Prompt: "hi", Harness: "gemini"}), 422, "harness_secret_missing")

	// A paused runtime is woken first, then meets the same absent agent.
	env.Must(t, 200, "POST", rtPath+"/pause", nil)
	wantError(t, env.Do(t, "POST", rtPath+"/prompt", client.PromptRequest{Prompt: "hi"}), 501, "agent_not_supported")
	var rt client.Runtime
	env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
	if rt.Status != client.RuntimeRunning {
		t.Fatalf("runtime after a prompt while paused: %s, want running", rt.Status)
	}

	var list client.List[client.Session]
	env.Must(t, 200, "GET", rtPath+"/sessions", nil).Decode(t, &list)
	ss, _, err := env.Store.ListSessions(context.Background(), p.RuntimeID, store.Page{Limit: 100})
	if len(list.Items) != 0 || len(ss) != 0 || err != nil {
		t.Fatalf("sessions after turns that never ran: %+v, in the store %+v, %v", list.Items, ss, err)
	}
	wantError(t, env.Do(t, "GET", rtPath+"/sessions/"+uuid.NewString(), nil), 404, "session_not_found")
}

// TestSidecarCapabilities: capabilities_json chooses the image, is
// answered normalized, and refuses unknown values, malformed JSON and an
// image of another choice; PATCH switches it on and off.
func TestSidecarCapabilities(t *testing.T) {
	env, _, _ := setup(t)
	const projects = "/api/v1/org/acme/ws/dev/projects"
	create := func(name string, cfg client.RuntimeConfig) client.Runtime {
		t.Helper()
		var p client.Project
		env.Must(t, 201, "POST", projects, client.CreateProjectRequest{Name: name, Runtime: &cfg}).Decode(t, &p)
		var rt client.Runtime
		env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil).Decode(t, &rt)
		return rt
	}
	for _, tc := range []struct {
		name, in, image, json string
		cfgImage              string
	}{
		{"computer-use", `["computer_use"]`, "paddock/computer-use:bookworm", `["computer_use"]`, ""},
		{"all-harness", `["all_harness","computer_use","all_harness"]`, "paddock/all-harness:bookworm", `["all_harness","computer_use"]`, ""},
		{"spaced-json", ` [ "computer_use" ] `, "paddock/computer-use:bookworm", `["computer_use"]`, ""},
		{"default-image-named", `["computer_use"]`, "paddock/computer-use:bookworm", `["computer_use"]`, "paddock/debian:bookworm"},
		{"own-image-named", `["all_harness"]`, "paddock/all-harness:bookworm", `["all_harness"]`, "paddock/all-harness:bookworm"},
		{"none", `[]`, "paddock/debian:bookworm", "", ""},
	} {
		rt := create(tc.name, client.RuntimeConfig{CapabilitiesJSON: tc.in, Image: tc.cfgImage})
		if rt.Config.Image != tc.image || rt.Config.CapabilitiesJSON != tc.json {
			t.Errorf("%s: image %q capabilities_json %q, want %q %q", tc.name, rt.Config.Image, rt.Config.CapabilitiesJSON, tc.image, tc.json)
		}
	}
	for _, tc := range []struct {
		name string
		cfg  client.RuntimeConfig
		code string
	}{
		{"unknown", client.RuntimeConfig{CapabilitiesJSON: `["computer_use","gpu"]`}, "unknown_sidecar_capability"},
		{"an object", client.RuntimeConfig{CapabilitiesJSON: `{"computer_use":true}`}, "invalid_capabilities_json"},
		{"a bare string", client.RuntimeConfig{CapabilitiesJSON: `computer_use`}, "invalid_capabilities_json"},
		{"numbers", client.RuntimeConfig{CapabilitiesJSON: `[1]`}, "invalid_capabilities_json"},
		{"another image", client.RuntimeConfig{CapabilitiesJSON: `["computer_use"]`, Image: "paddock/test-busybox:latest"}, "sidecar_image_conflict"},
		{"the other sidecar's image", client.RuntimeConfig{CapabilitiesJSON: `["computer_use"]`, Image: "paddock/all-harness:bookworm"}, "sidecar_image_conflict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, env.Do(t, "POST", projects, client.CreateProjectRequest{Name: "refused", Runtime: &tc.cfg}), 400, tc.code)
			wantError(t, env.Do(t, "GET", projects+"/refused", nil), 404, "project_not_found")
		})
	}

	// PATCH: on and off while idle (live), then with a sandbox (next start).
	rt := create("switch", client.RuntimeConfig{})
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + rt.ID
	patch := func(v string) client.RuntimeUpdate {
		t.Helper()
		var up client.RuntimeUpdate
		env.Must(t, 200, "PATCH", rtPath, client.RuntimePatch{CapabilitiesJSON: &v}).Decode(t, &up)
		return up
	}
	names := func(s []string) string { return strings.Join(s, ",") }
	if up := patch(`["computer_use"]`); names(up.Live) != "image,capabilities_json" || len(up.NextStart) != 0 ||
		up.Runtime.Config.Image != "paddock/computer-use:bookworm" || up.Runtime.Config.CapabilitiesJSON != `["computer_use"]` {
		t.Fatalf("on, idle: %+v %+v", up, up.Runtime.Config)
	}
	if up := patch(`["all_harness"]`); names(up.Live) != "image,capabilities_json" || up.Runtime.Config.Image != "paddock/all-harness:bookworm" {
		t.Fatalf("switched, idle: %+v %+v", up, up.Runtime.Config)
	}
	if up := patch(`[]`); names(up.Live) != "image,capabilities_json" ||
		up.Runtime.Config.Image != "paddock/debian:bookworm" || up.Runtime.Config.CapabilitiesJSON != "" {
		t.Fatalf("off, idle: %+v %+v", up, up.Runtime.Config)
	}
	if up := patch(``); len(up.Live)+len(up.NextStart) != 0 {
		t.Fatalf("off again: %+v", up)
	}
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	if up := patch(`["computer_use"]`); names(up.NextStart) != "image,capabilities_json" || len(up.Live) != 0 ||
		up.Runtime.Config.Image != "paddock/computer-use:bookworm" {
		t.Fatalf("on, running: %+v %+v", up, up.Runtime.Config)
	}
	if up := patch(``); names(up.NextStart) != "image,capabilities_json" || up.Runtime.Config.Image != "paddock/debian:bookworm" {
		t.Fatalf("off, running: %+v %+v", up, up.Runtime.Config)
	}
	patch(`["computer_use"]`)
	// The next sandbox runs on the image the sidecars chose.
	env.Must(t, 200, "POST", rtPath+"/reset", nil)
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	if live := env.Fake.Live(); len(live) != 1 || live[0].Spec.Image != "paddock/computer-use:bookworm" {
		t.Fatalf("the new sandbox: %+v", live)
	}
	// Refused patches change nothing.
	before := env.Must(t, 200, "GET", rtPath, nil)
	for _, tc := range []struct {
		body client.RuntimePatch
		code string
	}{
		{client.RuntimePatch{CapabilitiesJSON: ptr(`["gpu"]`)}, "unknown_sidecar_capability"},
		{client.RuntimePatch{CapabilitiesJSON: ptr(`computer_use`)}, "invalid_capabilities_json"},
		{client.RuntimePatch{Image: ptr("paddock/test-busybox:latest")}, "sidecar_image_conflict"},
	} {
		wantError(t, env.Do(t, "PATCH", rtPath, tc.body), 400, tc.code)
	}
	if r := env.Must(t, 200, "GET", rtPath, nil); string(r.Body) != string(before.Body) {
		t.Fatalf("a refused patch changed the runtime:\n%s\n%s", before.Body, r.Body)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCapabilitiesListGPUs: a provider's GPUs (an ssh provider's machine's,
// from nvidia-smi; here the fake host's) are in its matrix in GET
// /api/capabilities, and a provider without any has no gpus key.
func TestCapabilitiesListGPUs(t *testing.T) {
	env := servertest.New(t, servertest.Options{Provider: fake.New(fake.Config{GPUs: []string{"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"}})})
	r := env.Must(t, 200, "GET", "/api/capabilities", nil)
	var c client.Capabilities
	r.Decode(t, &c)
	if got := c.Providers["fake"].GPUs; strings.Join(got, ",") != "NVIDIA A100-SXM4-80GB,NVIDIA A100-SXM4-80GB" {
		t.Fatalf("gpus = %q, want the host's two", got)
	}
	bare := servertest.New(t, servertest.Options{})
	if b := bare.Must(t, 200, "GET", "/api/capabilities", nil).Body; strings.Contains(string(b), `"gpus"`) {
		t.Fatalf("a provider without GPUs lists some: %s", b)
	}
}

// TestCapabilitiesDiscovery: GET /api/capabilities names the harnesses,
// the default one, and the sidecar capabilities (whose images the fake
// provider does not have).
func TestCapabilitiesDiscovery(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	var c client.Capabilities
	env.Must(t, 200, "GET", "/api/capabilities", nil).Decode(t, &c)
	var names []string
	for _, h := range c.Harnesses {
		names = append(names, h.Name)
		if h.Binary == "" || len(h.Secrets) == 0 || h.WrittenAgainst == "" || h.Installed || len(h.Images) != 0 {
			t.Errorf("harness %+v", h)
		}
	}
	if strings.Join(names, ",") != "claude-code,codex,opencode,gemini,kimi" {
		t.Errorf("harnesses: %v", names)
	}
	secrets := map[string]string{}
	for _, h := range c.Harnesses {
		secrets[h.Name] = strings.Join(h.Secrets, ",")
	}
	if !strings.Contains(secrets["claude-code"], "ANTHROPIC_API_KEY") || secrets["gemini"] != "GEMINI_API_KEY" {
		t.Errorf("harness secrets: %v", secrets)
	}
	if c.DefaultHarness != "claude-code" {
		t.Errorf("default harness %q", c.DefaultHarness)
	}
	var sidecars []string
	for _, s := range c.SidecarCapabilities {
		sidecars = append(sidecars, s.Name+"="+s.Image)
		if s.Available || s.Description == "" {
			t.Errorf("sidecar capability %+v", s)
		}
	}
	slices.Sort(sidecars)
	if strings.Join(sidecars, " ") != "all_harness=paddock/all-harness:bookworm computer_use=paddock/computer-use:bookworm" {
		t.Errorf("sidecar capabilities: %v", sidecars)
	}
}

// TestSessionsOfARuntime: a session (recorded here in the store, as a
// turn that ran would leave it) is listed and read on its runtime only;
// continuing it is refused before anything runs, and a refused turn adds
// nothing to it. Sessions go with the project.
func TestSessionsOfARuntime(t *testing.T) {
	env, p, rtPath := setup(t)
	ctx := context.Background()
	var rt client.Runtime
	env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
	now := time.Now().UTC().Truncate(time.Second)
	sess := store.Session{ID: uuid.NewString(), OrgID: rt.OrgID, WorkspaceID: rt.WorkspaceID, RuntimeID: rt.ID,
		Kind: client.SessionPrompt, Harness: "codex", HarnessSessionID: "thread-1", Status: client.SessionCompleted,
		Title: "hello", Turns: 1, Events: 1, CreatedAt: now, UpdatedAt: now}
	if err := env.Store.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	ev := client.SessionEvent{Seq: 1, Turn: 1, Time: now, Type: client.SessionEventMessage, Role: "user", Text: "hello"}
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Store.AppendSessionEvents(ctx, []store.SessionEvent{{SessionID: sess.ID, Seq: 1, Turn: 1, Type: ev.Type, At: now, Body: body}}); err != nil {
		t.Fatal(err)
	}
	transcript := func() client.SessionTranscript {
		t.Helper()
		var tr client.SessionTranscript
		env.Must(t, 200, "GET", rtPath+"/sessions/"+sess.ID, nil).Decode(t, &tr)
		return tr
	}
	tr := transcript()
	if tr.ID != sess.ID || tr.Harness != "codex" || tr.Turns != 1 || len(tr.Events) != 1 || tr.Events[0].Text != "hello" {
		t.Fatalf("transcript: %+v", tr)
	}
	var list client.List[client.Session]
	env.Must(t, 200, "GET", rtPath+"/sessions", nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != sess.ID || list.Items[0].HarnessSessionID != "thread-1" {
		t.Fatalf("sessions: %+v", list.Items)
	}

	// Another runtime does not have it.
	other := newRuntime(t, env, "other")
	wantError(t, env.Do(t, "GET", other+"/sessions/"+sess.ID, nil), 404, "session_not_found")
	wantError(t, env.Do(t, "POST", other+"/prompt", client.PromptRequest{Prompt: "again", SessionID: sess.ID}), 404, "session_not_found")
	env.Must(t, 200, "GET", other+"/sessions", nil).Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("the other runtime's sessions: %+v", list.Items)
	}

	// Continuing it: its harness decides, and its credential is checked.
	wantError(t, env.Do(t, "POST", rtPath+"/prompt", client.PromptRequest{Prompt: "again", SessionID: sess.ID, Harness: "claude-code"}), 400, "session_harness_mismatch")
	r := env.Do(t, "POST", rtPath+"/prompt", client.PromptRequest{Prompt: "again", SessionID: sess.ID})
	wantError(t, r, 422, "harness_secret_missing")
	if !strings.Contains(string(r.Body), "CODEX_API_KEY") {
		t.Errorf("missing codex credential: %s", r.Body)
	}
	env.Must(t, 201, "POST", "/api/v1/org/acme/secrets", client.CreateSecretRequest{Name: "codex", Value: "sk-test", Env: "CODEX_API_KEY"})
	env.Must(t, 200, "POST", rtPath+"/start", client.StartRuntimeRequest{SecretIDs: []string{"codex"}})
	wantError(t, env.Do(t, "POST", rtPath+"/prompt", client.PromptRequest{Prompt: "again", SessionID: sess.ID}), 501, "agent_not_supported")
	if after := transcript(); after.Turns != 1 || len(after.Events) != 1 || after.Status != client.SessionCompleted {
		t.Fatalf("the session after a turn that never ran: %+v", after)
	}
	env.Must(t, 200, "GET", rtPath+"/sessions", nil).Decode(t, &list)
	if len(list.Items) != 1 {
		t.Fatalf("sessions after a turn that never ran: %+v", list.Items)
	}

	env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/"+p.Name, nil)
	if _, err := env.Store.GetSession(ctx, sess.ID); err == nil {
		t.Fatal("the session outlived its project")
	}
}

// TestSidecarMCPServerConflict: computer_use gives a runtime's harnesses
// an MCP server named computer-use; a binding that ships a server of that
// name is a conflict like any other, refused rather than silently
// overwritten (or, for Codex, written twice into config.toml).
func TestSidecarMCPServerConflict(t *testing.T) {
	env, _, _ := setup(t)
	// The name of computer_use's MCP server is reserved: no bundle can
	// ship it, so a binding can never collide with the sidecar's.
	res := env.MustRaw(t, 400, "POST", "/api/v1/org/acme/capabilities", "application/gzip", capTarGz(t, capFile{name: "capability.yaml",
		body: capManifest("browser", "1.0.0", "mcp_servers:\n  computer-use: {url: \"https://mcp.example.com/mcp\"}\n")}))
	if res.Code() != "invalid_capability" || !strings.Contains(string(res.Body), "mcp_servers.computer-use") || !strings.Contains(string(res.Body), "reserved") {
		t.Fatalf("a bundle shipping computer-use: %s", res.Body)
	}
}
