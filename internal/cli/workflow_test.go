package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestWorkflowCommands: `workflow run` sends the file's workflow (YAML on
// stdin, --name and --schedule over the file's), refuses a file with an
// unknown key before sending anything, and `workflow follow` exits 1 for
// a run that failed (the fake provider runs no agent: the runtime has no
// sandbox, so its exec step fails with runtime_not_running).
func TestWorkflowCommands(t *testing.T) {
	a, env := startScoped(t, servertest.Options{})
	clitest.MustRun(t, env, "project", "create", "agent")
	file := "name: from-file\nsteps:\n  - {type: exec, argv: [make, test], env: {CI: '1'}, continue_on_error: true}\n  - {name: ask, type: prompt, prompt: hi}\n"
	stdout, stderr, code := clitest.RunInput(t, env, file, "workflow", "run", "agent", "-f", "-", "--name", "build", "--schedule", "@hourly")
	if code != cli.ExitOK {
		t.Fatalf("workflow run: %d %s %s", code, stdout, stderr)
	}
	var sent client.CreateWorkflowRequest
	if err := json.Unmarshal([]byte(a.body("POST /api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/workflows")), &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Name != "build" || sent.Schedule != "@hourly" || len(sent.Steps) != 2 || sent.Steps[0].Env["CI"] != "1" ||
		!sent.Steps[0].ContinueOnError || sent.Steps[1].Prompt != "hi" {
		t.Fatalf("sent %+v", sent)
	}
	if !strings.Contains(stdout, "build") || !strings.Contains(stdout, "@hourly") || !strings.Contains(stdout, "step-1") {
		t.Fatalf("workflow run printed %q", stdout)
	}
	out, errOut, code := clitest.Run(t, env, "workflow", "follow", "agent", "build")
	if code != cli.ExitError || !strings.Contains(out, "step step-1 failed") || !strings.Contains(out, "runtime_not_running") ||
		!strings.HasSuffix(out, "run failed\n") {
		t.Fatalf("workflow follow: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := clitest.RunInput(t, env, "name: x\nstep: []\n", "workflow", "run", "agent", "-f", "-"); code != cli.ExitUsage || !strings.Contains(errOut, "unknown field") {
		t.Fatalf("a file with an unknown key: %d %q", code, errOut)
	}
	rows := clitest.Table(clitest.MustRun(t, env, "workflow", "ls", "agent"))
	if len(rows) != 2 || rows[1][1] != "build" {
		t.Fatalf("workflow ls: %q", rows)
	}
}
