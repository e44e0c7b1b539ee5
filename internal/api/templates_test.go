package api_test

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

const tplPath = "/api/v1/org/acme/ws/dev/templates"

// setupNetworks is setup on a fake provider that offers the network
// policies nets, with acme's workspace dev and no project.
func setupNetworks(t *testing.T, nets ...provider.NetworkPolicy) *servertest.Env {
	t.Helper()
	prov := fake.New(fake.Config{Networks: nets, Capacity: provider.Resources{CPUMillis: 4000, MemoryMB: 8192}})
	env := servertest.New(t, servertest.Options{Provider: prov})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	return env
}

// TestTemplates walks a template's routes: create, list, get by name and
// id, a name taken, delete.
func TestTemplates(t *testing.T) {
	env := setupNetworks(t, provider.NetworkNone, provider.NetworkProxy)
	env.Must(t, 201, "POST", "/api/v1/org/acme/secrets", client.CreateSecretRequest{Name: "anthropic", Value: "sk-ant-test", Env: "ANTHROPIC_API_KEY"})
	var tpl client.Template
	env.Must(t, 201, "POST", tplPath, client.CreateTemplateRequest{Name: "agent", Description: "an agent", Runtime: &client.RuntimeConfig{
		Image: "example/agent:1", CPUMillis: 500, MemoryMB: 256, PidsLimit: 128, DiskMB: 512,
		Network: &client.NetworkPolicy{Mode: "proxy", Allow: []string{"api.anthropic.com"}}, Secrets: []string{"anthropic"},
		IdleTimeoutSeconds: 60, ArchiveAfterSeconds: 3600, Harness: "codex", Model: "gpt-5-codex",
	}}).Decode(t, &tpl)
	c := tpl.Runtime
	if tpl.Name != "agent" || tpl.Description != "an agent" || c.Image != "example/agent:1" || c.CPUMillis != 500 || c.MemoryMB != 256 ||
		c.PidsLimit != 128 || c.DiskMB != 512 || c.Network == nil || c.Network.Mode != "proxy" || len(c.Secrets) != 1 ||
		c.IdleTimeoutSeconds != 60 || c.ArchiveAfterSeconds != 3600 || c.Harness != "codex" || c.Model != "gpt-5-codex" {
		t.Fatalf("template = %+v", tpl)
	}
	// What a template leaves out stays out: the defaults apply to projects.
	var bare client.Template
	env.Must(t, 201, "POST", tplPath, client.CreateTemplateRequest{Name: "bare"}).Decode(t, &bare)
	if bare.Runtime.Image != "" || bare.Runtime.CPUMillis != 0 || bare.Runtime.Network != nil || bare.Runtime.RootFS != "" {
		t.Fatalf("bare template = %+v", bare.Runtime)
	}

	var got client.Template
	env.Must(t, 200, "GET", tplPath+"/agent", nil).Decode(t, &got)
	if got.ID != tpl.ID {
		t.Fatalf("by name = %+v", got)
	}
	env.Must(t, 200, "GET", tplPath+"/"+tpl.ID, nil).Decode(t, &got)
	if got.Name != "agent" {
		t.Fatalf("by id = %+v", got)
	}
	var list client.List[client.Template]
	env.Must(t, 200, "GET", tplPath, nil).Decode(t, &list)
	if len(list.Items) != 2 || list.Items[0].ID != tpl.ID || list.Items[1].ID != bare.ID {
		t.Fatalf("list = %+v", list.Items)
	}
	if r := env.Must(t, 409, "POST", tplPath, client.CreateTemplateRequest{Name: "agent"}); r.Code() != "template_exists" {
		t.Fatalf("a name taken: %s", r.Body)
	}

	env.Must(t, 204, "DELETE", tplPath+"/agent", nil)
	if r := env.Must(t, 404, "GET", tplPath+"/agent", nil); r.Code() != "template_not_found" {
		t.Fatalf("after delete: %s", r.Body)
	}
	env.Must(t, 404, "DELETE", tplPath+"/"+tpl.ID, nil)
}

// TestTemplateValidation: a template is checked as a project's runtime
// config is, with the same codes; nothing is stored when it is refused.
func TestTemplateValidation(t *testing.T) {
	env, _, _ := setup(t)
	for _, tc := range []struct {
		name   string
		body   client.CreateTemplateRequest
		status int
		code   string
	}{
		{"a bad name", client.CreateTemplateRequest{Name: "Bad Name"}, 400, "invalid_name"},
		{"an image outside the allow-list", client.CreateTemplateRequest{Name: "a", Runtime: &client.RuntimeConfig{Image: "ubuntu:24.04"}}, 400, "image_not_allowed"},
		{"an image on the metadata address", client.CreateTemplateRequest{Name: "a", Runtime: &client.RuntimeConfig{Image: "169.254.169.254/x"}}, 400, "image_not_allowed"},
		{"too little memory", client.CreateTemplateRequest{Name: "a", Runtime: &client.RuntimeConfig{MemoryMB: 8}}, 400, "invalid_resources"},
		{"too many cores", client.CreateTemplateRequest{Name: "a", Runtime: &client.RuntimeConfig{CPUMillis: 1 << 40}}, 400, "invalid_resources"},
		{"a secret that does not exist", client.CreateTemplateRequest{Name: "a", Runtime: &client.RuntimeConfig{Secrets: []string{"nope"}}}, 404, "secret_not_found"},
		{"an unknown harness", client.CreateTemplateRequest{Name: "a", Runtime: &client.RuntimeConfig{Harness: "hal-9000"}}, 400, "unknown_harness"},
		{"a model read as a flag", client.CreateTemplateRequest{Name: "a", Runtime: &client.RuntimeConfig{Model: "--dangerously-skip"}}, 400, "invalid_model"},
		{"rules without the proxy", client.CreateTemplateRequest{Name: "a", Runtime: &client.RuntimeConfig{Network: &client.NetworkPolicy{Mode: "none", Allow: []string{"x.com"}}}}, 400, "network_rules_need_proxy"},
		{"an unknown sidecar", client.CreateTemplateRequest{Name: "a", Runtime: &client.RuntimeConfig{CapabilitiesJSON: `["teleport"]`}}, 400, "unknown_sidecar_capability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(t, "POST", tplPath, tc.body)
			if r.Status != tc.status || r.Code() != tc.code {
				t.Fatalf("create = %d %s, want %d %s", r.Status, r.Body, tc.status, tc.code)
			}
		})
	}
	var list client.List[client.Template]
	env.Must(t, 200, "GET", tplPath, nil).Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("refused templates were stored: %+v", list.Items)
	}
	// The same codes as a project's runtime config.
	r := env.Do(t, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p2", Runtime: &client.RuntimeConfig{Harness: "hal-9000"}})
	if r.Status != 400 || r.Code() != "unknown_harness" {
		t.Fatalf("project with an unknown harness = %d %s", r.Status, r.Body)
	}
}

// TestTemplatesOfAnotherOrg: another org's templates answer 404, as if
// they did not exist, to read, delete or make a project from.
func TestTemplatesOfAnotherOrg(t *testing.T) {
	env, _, _ := setup(t)
	var tpl client.Template
	env.Must(t, 201, "POST", tplPath, client.CreateTemplateRequest{Name: "secret-sauce"}).Decode(t, &tpl)
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "other"})
	env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "eve@example.com", Role: "owner"})
	var eve client.CreatedKey
	env.Must(t, 201, "POST", "/api/v1/org/other/keys", client.CreateKeyRequest{Member: "eve@example.com"}).Decode(t, &eve)
	env.MustKey(t, eve.Key, 201, "POST", "/api/v1/org/other/ws", client.CreateWorkspaceRequest{Name: "dev"})

	for _, path := range []string{tplPath, tplPath + "/secret-sauce", tplPath + "/" + tpl.ID} {
		env.MustKey(t, eve.Key, 404, "GET", path, nil)
	}
	env.MustKey(t, eve.Key, 404, "DELETE", tplPath+"/secret-sauce", nil)
	// Her own workspace of the same name does not see it either, by name
	// or by id.
	for _, ref := range []string{"secret-sauce", tpl.ID} {
		r := env.MustKey(t, eve.Key, 404, "GET", "/api/v1/org/other/ws/dev/templates/"+ref, nil)
		if r.Code() != "template_not_found" {
			t.Fatalf("another org's template by %s: %s", ref, r.Body)
		}
		r = env.MustKey(t, eve.Key, 404, "POST", "/api/v1/org/other/ws/dev/projects", client.CreateProjectRequest{Name: "x", Template: ref})
		if r.Code() != "template_not_found" {
			t.Fatalf("a project from another org's template by %s: %s", ref, r.Body)
		}
	}
	env.Must(t, 200, "GET", tplPath+"/secret-sauce", nil)
}

// TestProjectFromTemplate: a project made from a template has its config,
// each field the project gives overriding the template's; start starts
// the runtime, and a start that fails leaves the project and says why.
func TestProjectFromTemplate(t *testing.T) {
	env := setupNetworks(t, provider.NetworkNone, provider.NetworkOpen)
	env.Must(t, 201, "POST", tplPath, client.CreateTemplateRequest{Name: "agent", Runtime: &client.RuntimeConfig{
		Image: "example/agent:1", CPUMillis: 500, MemoryMB: 256, IdleTimeoutSeconds: 60, ArchiveAfterSeconds: 3600,
		Harness: "codex", Model: "gpt-5-codex",
	}})

	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{
		Name: "from-tpl", Template: "agent", Runtime: &client.RuntimeConfig{MemoryMB: 512, Model: "o3", Network: &client.NetworkPolicy{Mode: "open"}},
	}).Decode(t, &p)
	if p.StartError != nil {
		t.Fatalf("a create without start has a start_error: %+v", p)
	}
	rt := runtimeOf(t, env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil))
	c := rt.Config
	if rt.Status != client.RuntimeIdle || c.Image != "example/agent:1" || c.CPUMillis != 500 || c.MemoryMB != 512 || c.IdleTimeoutSeconds != 60 ||
		c.ArchiveAfterSeconds != 3600 || c.Network == nil || c.Network.Mode != "open" ||
		c.Harness != "codex" || c.Model != "o3" || c.PidsLimit == 0 {
		t.Fatalf("runtime from template = %+v %+v", rt, c)
	}
	if n := env.Fake.Count(); n != 0 {
		t.Fatalf("compute without start = %d", n)
	}
	if r := env.Must(t, 404, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "x", Template: "none"}); r.Code() != "template_not_found" {
		t.Fatalf("an unknown template: %s", r.Body)
	}

	// start: the runtime runs when the answer comes.
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "started", Template: "agent", Start: true}).Decode(t, &p)
	rt = runtimeOf(t, env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil))
	if p.StartError != nil || rt.Status != client.RuntimeRunning || rt.CurrentSandboxID == "" || env.Fake.Count() != 1 {
		t.Fatalf("project with start = %+v, runtime %+v", p, rt)
	}

	// A start that fails: the project stands, the answer says why.
	env.Fake.FailNext("create", errdefs.Unavailable("engine_down", "the engine is down").WithCause(errors.New("connection refused")))
	r := env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "failed", Template: "agent", Start: true})
	r.Decode(t, &p)
	if p.StartError == nil || p.StartError.Code != "engine_down" || p.RuntimeID == "" {
		t.Fatalf("project whose start failed = %s", r.Body)
	}
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/projects/failed", nil)
	rt = runtimeOf(t, env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil))
	if rt.Status != client.RuntimeError || env.Fake.Count() != 1 {
		t.Fatalf("runtime whose start failed = %+v, compute %d", rt, env.Fake.Count())
	}
	// A template deleted later leaves its projects' config as it was.
	env.Must(t, 204, "DELETE", tplPath+"/agent", nil)
	rt = runtimeOf(t, env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil))
	if rt.Config.Image != "example/agent:1" {
		t.Fatalf("config after the template's delete = %+v", rt.Config)
	}
}

// TestRuntimeModelChanges: a runtime's harness and model change at once,
// checked as at creation; "" gives the default back.
func TestRuntimeModelChanges(t *testing.T) {
	env, _, rtPath := setup(t)
	var up client.RuntimeUpdate
	model, harness := "o3", "codex"
	env.Must(t, 200, "PATCH", rtPath, client.RuntimePatch{Model: &model, Harness: &harness}).Decode(t, &up)
	if up.Runtime.Config.Model != "o3" || up.Runtime.Config.Harness != "codex" || len(up.Live) != 2 || len(up.NextStart) != 0 {
		t.Fatalf("update = %+v", up)
	}
	bad := "hal"
	if r := env.Must(t, 400, "PATCH", rtPath, client.RuntimePatch{Harness: &bad}); r.Code() != "unknown_harness" {
		t.Fatalf("an unknown harness: %s", r.Body)
	}
	bad = "-rf"
	if r := env.Must(t, 400, "PATCH", rtPath, client.RuntimePatch{Model: &bad}); r.Code() != "invalid_model" {
		t.Fatalf("a model read as a flag: %s", r.Body)
	}
	none := ""
	var cleared client.RuntimeUpdate
	env.Must(t, 200, "PATCH", rtPath, client.RuntimePatch{Model: &none}).Decode(t, &cleared)
	if cleared.Runtime.Config.Model != "" || cleared.Runtime.Config.Harness != "codex" {
		t.Fatalf("model cleared = %+v", cleared.Runtime.Config)
	}
}
