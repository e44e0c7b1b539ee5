package cli_test

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/pkg/client"
)

// unknown is a session id no session has.
const unknown = "00000000-0000-4000-8000-000000000000"

// promptBodies holds what prompt sends for its flags and input; the
// server refuses each (no model credential, no such session).
func promptBodies(t *testing.T, f *apiServer, env map[string]string) {
	const route = "POST /api/v1/org/{org}/ws/{ws}/runtimes/{id}/prompt"
	for _, tt := range []struct {
		stdin string
		args  []string
		body  string
	}{
		{"", []string{"prompt", "agent", "what is here?", "--harness", "claude-code", "--model", "opus", "--timeout", "90s"},
			`{"prompt":"what is here?","harness":"claude-code","model":"opus","timeout_seconds":90}`},
		{"and now?\n", []string{"prompt", "agent", "--session", unknown, "-"}, `{"prompt":"and now?","session_id":"` + unknown + `"}`},
		{"piped\n", []string{"prompt", "agent"}, `{"prompt":"piped"}`},
	} {
		if _, errOut, code := clitest.RunInput(t, env, tt.stdin, tt.args...); code != cli.ExitError || !strings.HasPrefix(errOut, "error: ") {
			t.Fatalf("paddock %s: exit %d %q", strings.Join(tt.args, " "), code, errOut)
		}
		jsonEq(t, f.body(route), tt.body)
	}
}

// TestPromptRefusals: what the server refuses before a harness runs, and
// what the CLI refuses before it asks. A turn itself needs a harness in a
// sandbox: TestCLIPrompt in internal/e2e runs those.
func TestPromptRefusals(t *testing.T) {
	t.Parallel()
	f, env := startCapabilities(t)
	tests := []struct {
		name   string
		setup  func(t *testing.T)
		stdin  string
		args   []string
		code   int
		stderr string // what stderr ends with
	}{
		{
			name: "no model credentials", args: []string{"prompt", "agent", "hi"}, code: cli.ExitError,
			stderr: "(harness_secret_missing)\n",
		},
		{
			name: "an unknown session",
			setup: func(t *testing.T) {
				f.Must(t, 201, "POST", "/api/v1/org/acme/secrets", client.CreateSecretRequest{Name: "anthropic", Value: "sk-ant-test", Env: "ANTHROPIC_API_KEY"})
				f.Must(t, 200, "PATCH", agentRuntime(t, f), client.RuntimePatch{Secrets: &[]string{"anthropic"}})
			},
			args: []string{"prompt", "agent", "hi", "--session", unknown}, code: cli.ExitError,
			stderr: "(session_not_found)\n",
		},
		{
			name: "a task has no session", args: []string{"task", "agent", "hi", "--session", "x"}, code: cli.ExitUsage,
		},
		{
			name: "an empty prompt", args: []string{"prompt", "agent", " "}, code: cli.ExitUsage,
		},
		{
			name: "an empty prompt on stdin", stdin: "\n", args: []string{"prompt", "agent", "-"}, code: cli.ExitUsage,
		},
		{
			name: "a negative timeout", args: []string{"prompt", "agent", "hi", "--timeout", "-1s"}, code: cli.ExitUsage,
		},
		{
			name: "too many arguments", args: []string{"prompt", "agent", "fix", "it"}, code: cli.ExitUsage,
		},
	}
	t.Run("what the CLI sends", func(t *testing.T) { promptBodies(t, f, env) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup(t)
			}
			out, errOut, code := clitest.RunInput(t, env, tt.stdin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if !strings.HasSuffix(errOut, tt.stderr) {
				t.Fatalf("stderr = %q, want it to end with %q", errOut, tt.stderr)
			}
			if tt.code == cli.ExitUsage && (out != "" || !strings.HasPrefix(errOut, "error: ")) {
				t.Fatalf("usage error: stdout %q stderr %q", out, errOut)
			}
		})
	}
}
