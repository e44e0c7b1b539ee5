package e2e

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestProjectFromTemplateRunsItsModel: on real Docker, a project made
// from a template with start runs at once, with the template's harness
// and model; a prompt that names neither runs that harness (the Gemini
// stand-in of the test image) with that model, which the CLI writes in
// its own session store in the sandbox.
func TestProjectFromTemplateRunsItsModel(t *testing.T) {
	env, _, _, _ := dockerEnv(t)
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/secrets", pc.CreateSecretRequest{Name: "gemini", Env: "GEMINI_API_KEY", Value: "test-not-real"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/templates", pc.CreateTemplateRequest{Name: "gem", Runtime: &pc.RuntimeConfig{
		Image: testenv.TestImage, CPUMillis: 500, MemoryMB: 128, PidsLimit: 64, Secrets: []string{"gemini"},
		Harness: "gemini", Model: "gemini-2.5-flash-lite",
	}})
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{Name: "from-gem", Template: "gem", Start: true}).Decode(t, &p)
	if p.StartError != nil {
		t.Fatalf("start: %+v", p.StartError)
	}
	var rt pc.Runtime
	env.Must(t, 200, "GET", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID, nil).Decode(t, &rt)
	if rt.Status != pc.RuntimeRunning || rt.Config.Model != "gemini-2.5-flash-lite" || rt.Config.Harness != "gemini" {
		t.Fatalf("runtime from the template: %+v", rt)
	}
	sdk, err := pc.New(env.URL, env.Key)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sdk.Prompt(bounded(t), "acme", "dev", p.RuntimeID, pc.PromptRequest{Prompt: "list the workspace", TimeoutSeconds: 90})
	if err != nil || res.Session.Harness != "gemini" || res.Session.Status != pc.SessionCompleted {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	model := func(m string) bool {
		out, err := sdk.Exec(bounded(t), "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: []string{"sh", "-c", `grep -rl "\"model\":\"$0\"" "$HOME/.gemini"`, m}})
		if err != nil || out.Exit == nil {
			t.Fatalf("exec: %+v, %v", out, err)
		}
		return out.Exit.Code == 0 && strings.TrimSpace(string(out.Stdout)) != ""
	}
	if !model("gemini-2.5-flash-lite") || model("gemini-2.5-pro") {
		t.Fatal("the turn did not run with the runtime's model")
	}
	// A prompt's own model overrides the runtime's.
	res, err = sdk.Prompt(bounded(t), "acme", "dev", p.RuntimeID, pc.PromptRequest{Prompt: "again", Model: "gemini-2.5-pro", TimeoutSeconds: 90})
	if err != nil || res.Session.Status != pc.SessionCompleted || !model("gemini-2.5-pro") {
		t.Fatalf("prompt with its own model: %+v, %v", res, err)
	}
}
