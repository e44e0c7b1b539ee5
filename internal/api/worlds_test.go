package api_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

const worldsPath = "/api/v1/org/acme/ws/dev/worlds"

// noWorlds fails when the workspace has any world or the org any row of
// kind world.
func noWorlds(t *testing.T, env *servertest.Env) {
	t.Helper()
	var list client.WorldList
	env.Must(t, 200, "GET", worldsPath, nil).Decode(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("worlds were made: %+v", list.Items)
	}
	var rows client.SandboxList
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes?kind=world", nil).Decode(t, &rows)
	if len(rows.Items) != 0 {
		t.Fatalf("members were made: %+v", rows.Items)
	}
}

// TestWorldRefusals: a bad request answers its 4xx and code and makes no
// world and no sandbox; a provider that cannot make private networks (the
// fake, as ssh and kubernetes) answers 422 world_not_supported.
func TestWorldRefusals(t *testing.T) {
	env, _, _ := setup(t)
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/templates", client.CreateTemplateRequest{Name: "base"})
	member := func(name string) client.WorldMemberRequest {
		return client.WorldMemberRequest{Name: name, Template: "base"}
	}
	many := make([]client.WorldMemberRequest, 17)
	for i := range many {
		many[i] = member("m" + string(rune('a'+i)))
	}
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"no members", client.CreateWorldRequest{Name: "w", Members: []client.WorldMemberRequest{}}, 400, "invalid_world"},
		{"too many members", client.CreateWorldRequest{Name: "w", Members: many}, 400, "invalid_world"},
		{"bad world name", client.CreateWorldRequest{Name: "-w", Members: []client.WorldMemberRequest{member("a")}}, 400, "invalid_world"},
		{"bad member name", client.CreateWorldRequest{Name: "w", Members: []client.WorldMemberRequest{member("A_b")}}, 400, "invalid_world"},
		{"a name twice", client.CreateWorldRequest{Name: "w", Members: []client.WorldMemberRequest{member("a"), member("a")}}, 400, "invalid_world"},
		{"a network of its own", client.CreateWorldRequest{Name: "w", Members: []client.WorldMemberRequest{{Name: "a", Template: "base",
			Runtime: &client.RuntimeConfig{Network: &client.NetworkPolicy{Mode: "open"}}}}}, 400, "invalid_world"},
		{"empty command", client.CreateWorldRequest{Name: "w", Members: []client.WorldMemberRequest{{Name: "a", Template: "base", Command: []string{""}}}}, 400, "invalid_world"},
		{"image not allowed", client.CreateWorldRequest{Name: "w", Members: []client.WorldMemberRequest{{Name: "a", Runtime: &client.RuntimeConfig{Image: "evil/miner:1"}}}}, 400, "image_not_allowed"},
		{"unknown template", client.CreateWorldRequest{Name: "w", Members: []client.WorldMemberRequest{{Name: "a", Template: "nope"}}}, 404, "template_not_found"},
		{"unknown field", map[string]any{"name": "w", "nope": 1}, 400, "unknown_field"},
		{"a provider without private networks", client.CreateWorldRequest{Name: "w", Members: []client.WorldMemberRequest{member("a"), member("b")}}, 422, "world_not_supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, env.Do(t, "POST", worldsPath, tc.body), tc.status, tc.code)
			noWorlds(t, env)
		})
	}
	if n := env.Fake.Count(); n != 0 {
		t.Fatalf("the provider holds %d sandboxes", n)
	}
	for _, p := range []string{"/" + uuid.NewString(), "/not-an-id"} {
		wantError(t, env.Do(t, "GET", worldsPath+p, nil), 404, "world_not_found")
		wantError(t, env.Do(t, "DELETE", worldsPath+p, nil), 404, "world_not_found")
		wantError(t, env.Do(t, "POST", worldsPath+p+"/pause", nil), 404, "world_not_found")
		wantError(t, env.Do(t, "POST", worldsPath+p+"/members/a/exec", client.ExecRequest{Argv: []string{"true"}}), 404, "world_not_found")
	}
}
