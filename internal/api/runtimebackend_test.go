package api_test

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestRuntimeBackend: metadata_json's runtime_backend on a project's
// creation chooses the runtime's provider, as provider does: a sandbox
// starts on it; an unknown one answers as an unknown provider does; one
// that differs from provider, and a metadata_json that is not an object
// of runtime_backend, are refused; nothing is created by a refusal, and
// metadata_json is never answered.
func TestRuntimeBackend(t *testing.T) {
	env := servertest.New(t, servertest.Options{
		Provider:      fake.New(fake.Config{Name: "docker"}),
		MoreProviders: []provider.Provider{fake.New(fake.Config{Name: "gvisor"})},
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	const projects = "/api/v1/org/acme/ws/dev/projects"

	create := func(name string, rc client.RuntimeConfig) client.Runtime {
		t.Helper()
		var p client.Project
		env.Must(t, 201, "POST", projects, client.CreateProjectRequest{Name: name, Runtime: &rc}).Decode(t, &p)
		r := env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil)
		if strings.Contains(string(r.Body), "metadata_json") {
			t.Fatalf("the runtime answers metadata_json: %s", r.Body)
		}
		return runtimeOf(t, r)
	}

	rt := create("on-gvisor", client.RuntimeConfig{MetadataJSON: `{"runtime_backend":"gvisor"}`})
	if rt.Config.Provider != "gvisor" {
		t.Fatalf("runtime_backend gvisor made a runtime on %q", rt.Config.Provider)
	}
	env.Must(t, 200, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+rt.ID+"/start", nil)
	var sbs client.List[client.Sandbox]
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?runtime_id="+rt.ID, nil).Decode(t, &sbs)
	if len(sbs.Items) != 1 || sbs.Items[0].Provider != "gvisor" {
		t.Fatalf("the runtime's sandboxes %+v, want one on gvisor", sbs.Items)
	}
	if rt := create("both-agree", client.RuntimeConfig{Provider: "gvisor", MetadataJSON: ` {"runtime_backend": "gvisor"} `}); rt.Config.Provider != "gvisor" {
		t.Fatalf("provider and runtime_backend gvisor made a runtime on %q", rt.Config.Provider)
	}
	if rt := create("no-backend", client.RuntimeConfig{MetadataJSON: `{}`}); rt.Config.Provider != "docker" {
		t.Fatalf("metadata_json without runtime_backend made a runtime on %q, want the default", rt.Config.Provider)
	}

	refused := []struct {
		name string
		rc   client.RuntimeConfig
		code string
	}{
		{"unknown backend", client.RuntimeConfig{MetadataJSON: `{"runtime_backend":"mars"}`}, "unknown_provider"},
		{"unknown provider alike", client.RuntimeConfig{Provider: "mars"}, "unknown_provider"},
		{"both differ", client.RuntimeConfig{Provider: "docker", MetadataJSON: `{"runtime_backend":"gvisor"}`}, "runtime_backend_conflict"},
		{"not JSON", client.RuntimeConfig{MetadataJSON: `runtime_backend=gvisor`}, "invalid_metadata_json"},
		{"an array", client.RuntimeConfig{MetadataJSON: `["gvisor"]`}, "invalid_metadata_json"},
		{"null", client.RuntimeConfig{MetadataJSON: `null`}, "invalid_metadata_json"},
		{"a number", client.RuntimeConfig{MetadataJSON: `{"runtime_backend":7}`}, "invalid_metadata_json"},
		{"another key", client.RuntimeConfig{MetadataJSON: `{"runtime_backend":"gvisor","region":"eu"}`}, "invalid_metadata_json"},
		{"two values", client.RuntimeConfig{MetadataJSON: `{"runtime_backend":"gvisor"} {}`}, "invalid_metadata_json"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(t, "POST", projects, client.CreateProjectRequest{Name: "refused", Runtime: &tc.rc})
			if r.Status != 400 || r.Code() != tc.code {
				t.Fatalf("create = %d %s, want 400 %s", r.Status, r.Body, tc.code)
			}
		})
	}
	var ps client.List[client.Project]
	env.Must(t, 200, "GET", projects, nil).Decode(t, &ps)
	if len(ps.Items) != 3 {
		t.Fatalf("%d projects after the refusals, want the 3 made", len(ps.Items))
	}
}

// TestDeclaredPorts: a runtime declares ports at creation, answered
// sorted; a port out of range or declared twice is refused.
func TestDeclaredPorts(t *testing.T) {
	env, _, _ := setup(t)
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "ports",
		Runtime: &client.RuntimeConfig{Ports: []client.RuntimePort{{Port: 8080}, {Port: 3000, Public: true}}}}).Decode(t, &p)
	rt := runtimeOf(t, env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil))
	if want := []client.RuntimePort{{Port: 3000, Public: true}, {Port: 8080}}; len(rt.Config.Ports) != 2 ||
		rt.Config.Ports[0] != want[0] || rt.Config.Ports[1] != want[1] {
		t.Fatalf("declared ports %+v, want %+v", rt.Config.Ports, want)
	}
	for name, body := range map[string]string{
		"twice":   `{"name":"x","runtime":{"ports":[{"port":3000},{"port":3000,"public":true}]}}`,
		"zero":    `{"name":"x","runtime":{"ports":[{"port":0}]}}`,
		"too big": `{"name":"x","runtime":{"ports":[{"port":65536}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := env.Do(t, "POST", "/api/v1/org/acme/ws/dev/projects", body)
			if r.Status != 400 || r.Code() != "invalid_port" {
				t.Fatalf("create = %d %s, want 400 invalid_port", r.Status, r.Body)
			}
		})
	}
}
