package api_test

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestSecretsAreWriteOnly walks the secret routes of an org and of a
// workspace: no answer ever holds a value, names are unique per scope, and
// a workspace's secret shadows the org's of the same name.
func TestSecretsAreWriteOnly(t *testing.T) {
	env, _, rtPath := setup(t)
	const value = "sk-test-value-that-must-never-be-answered"
	org, ws := "/api/v1/org/acme/secrets", "/api/v1/org/acme/ws/dev/secrets"

	var orgSecret, wsSecret client.Secret
	r := env.Must(t, 201, "POST", org, client.CreateSecretRequest{Name: "openai", Value: value})
	r.Decode(t, &orgSecret)
	if orgSecret.Env != "OPENAI" || orgSecret.WorkspaceID != "" || orgSecret.Version != 1 {
		t.Fatalf("created: %+v", orgSecret)
	}
	env.Must(t, 201, "POST", ws, client.CreateSecretRequest{Name: "openai", Value: value + "-ws", Env: "OPENAI_API_KEY"}).Decode(t, &wsSecret)
	if r := env.Must(t, 409, "POST", org, client.CreateSecretRequest{Name: "openai", Value: "x"}); r.Code() != "secret_exists" {
		t.Fatalf("duplicate: %s", r.Code())
	}

	var answers []string
	keep := func(r servertest.Response) { answers = append(answers, string(r.Body)) }
	for _, path := range []string{org, ws, org + "/openai", org + "/" + orgSecret.ID, ws + "/openai"} {
		keep(env.Must(t, 200, "GET", path, nil))
	}
	var list client.List[client.Secret]
	env.Must(t, 200, "GET", ws, nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != wsSecret.ID {
		t.Fatalf("workspace list: %+v", list.Items)
	}
	// Another scope's id is not found here.
	env.Must(t, 404, "GET", ws+"/"+orgSecret.ID, nil)

	// Replace: the value changes, the rest stays; then the variable.
	var replaced client.Secret
	nv := value + "-2"
	env.Must(t, 200, "PUT", org+"/openai", client.ReplaceSecretRequest{Value: &nv}).Decode(t, &replaced)
	if replaced.Version != 2 || replaced.Env != "OPENAI" {
		t.Fatalf("replaced: %+v", replaced)
	}
	keep(env.Must(t, 200, "PUT", org+"/openai", client.ReplaceSecretRequest{Env: "OPENAI_KEY"}))
	for _, a := range answers {
		if strings.Contains(a, value) || strings.Contains(a, "value\"") {
			t.Fatalf("an answer holds a value: %s", a)
		}
	}

	// Bad input: a clear 400 with a stable code, and nothing made.
	for _, tc := range []struct {
		body any
		code string
	}{
		{client.CreateSecretRequest{Name: "bad name", Value: "v"}, "invalid_secret_name"},
		{client.CreateSecretRequest{Name: "ok", Value: ""}, "invalid_secret_value"},
		{client.CreateSecretRequest{Name: "ok", Value: "v", Env: "HTTPS_PROXY"}, "invalid_secret_env"},
		{client.CreateSecretRequest{Name: "ok", Value: "v", Brokered: true}, "invalid_secret_hosts"},
		{client.CreateSecretRequest{Name: "ok", Value: "v", Hosts: []string{"a.com"}}, "invalid_secret_hosts"},
		{map[string]any{"name": "ok", "value": "v", "extra": 1}, "unknown_field"},
	} {
		if r := env.Must(t, 400, "POST", org, tc.body); r.Code() != tc.code {
			t.Errorf("%+v: %s, want %s", tc.body, r.Code(), tc.code)
		}
	}
	env.Must(t, 404, "GET", org+"/ok", nil)

	// A brokered secret is for proxy mode only: starting a none runtime
	// with it is refused, and nothing starts.
	env.Must(t, 201, "POST", org, client.CreateSecretRequest{Name: "anthropic", Value: "sk-ant", Brokered: true, Hosts: []string{"api.anthropic.com"}})
	if r := env.Must(t, 422, "POST", rtPath+"/start", client.StartRuntimeRequest{SecretIDs: []string{"anthropic"}}); r.Code() != "brokered_secret_needs_proxy" {
		t.Fatalf("brokered in none mode: %s", r.Code())
	}
	if n := env.Fake.Count(); n != 0 {
		t.Fatalf("compute after a refused start: %d", n)
	}

	// Bound secrets are checked when they are bound.
	if r := env.Must(t, 404, "PATCH", rtPath, client.RuntimePatch{Secrets: &[]string{"nope"}}); r.Code() != "secret_not_found" {
		t.Fatalf("binding an unknown secret: %s", r.Code())
	}
	if r := env.Must(t, 404, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p2",
		Runtime: &client.RuntimeConfig{Secrets: []string{"nope"}}}); r.Code() != "secret_not_found" {
		t.Fatalf("a project with an unknown secret: %s", r.Code())
	}
	env.Must(t, 404, "GET", "/api/v1/org/acme/ws/dev/projects/p2", nil)
	var up client.RuntimeUpdate
	env.Must(t, 200, "PATCH", rtPath, client.RuntimePatch{Secrets: &[]string{"openai"}}).Decode(t, &up)
	if strings.Join(up.Runtime.Config.Secrets, ",") != "openai" {
		t.Fatalf("bound: %+v", up.Runtime.Config)
	}

	// Delete, then it is gone and its name is free.
	env.Must(t, 204, "DELETE", ws+"/openai", nil)
	env.Must(t, 404, "GET", ws+"/openai", nil)
	env.Must(t, 201, "POST", ws, client.CreateSecretRequest{Name: "openai", Value: "again"})
}
