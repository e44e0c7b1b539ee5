package cli_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/pkg/client"
)

// aTurn is a turn that reads a directory and answers.
func aTurn(client.PromptRequest) []client.SessionEvent {
	return []client.SessionEvent{
		{Type: client.SessionEventMessage, Role: "assistant", Text: "Let me look."},
		{Type: client.SessionEventToolCall, Tool: &client.ToolCall{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command": "ls -la",
 "timeout": 10}`)}},
		{Type: client.SessionEventToolResult, Result: &client.ToolResult{ID: "t1", Output: "a.go\nb.go\n" + strings.Repeat("x", 300)}},
		{Type: client.SessionEventMessage, Role: "assistant", Text: "Two Go files."},
		{Type: client.SessionEventUsage, Usage: &client.TurnUsage{InputTokens: 1200, OutputTokens: 30, CacheReadTokens: 900, CostUSD: 0.0123}},
		{Type: client.SessionEventDone, Done: &client.TurnDone{HarnessSessionID: "h-1", Result: "Two Go files."}},
	}
}

// aFailedTurn is a turn the harness gives up on.
func aFailedTurn(client.PromptRequest) []client.SessionEvent {
	return []client.SessionEvent{
		{Type: client.SessionEventError, Error: &client.TurnError{Code: "harness_failed", Message: "rate limited"}},
		{Type: client.SessionEventDone, Done: &client.TurnDone{ExitCode: 1}},
	}
}

func TestPrompt(t *testing.T) {
	f, env := startCapabilityAPI(t)
	f.turn = aTurn
	const prompt = "POST /api/v1/org/{org}/ws/{ws}/runtimes/{id}/prompt"
	sid := fakeID(5)

	out, errOut, code := clitest.Run(t, env, "prompt", "agent", "what is here?", "--harness", "claude", "--model", "opus", "--timeout", "90s")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "Let me look.\n" +
		`→ Bash {"command":"ls -la","timeout":10}` + "\n" +
		"← a.go b.go " + strings.Repeat("x", 149) + "…\n" +
		"Two Go files.\n" +
		"usage: 1200 input, 30 output, 900 cache read tokens, $0.0123\n"
	if out != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if errOut != "session "+sid+" (continue with --session "+sid+")\n" {
		t.Fatalf("stderr = %q", errOut)
	}
	jsonEq(t, f.body(prompt), `{"prompt":"what is here?","harness":"claude","model":"opus","timeout_seconds":90}`)

	// Continued, with the prompt from standard input.
	if _, errOut, code := clitest.RunInput(t, env, "and now?\n", "prompt", "agent", "--session", sid, "-"); code != cli.ExitOK {
		t.Fatalf("continue: exit %d %s", code, errOut)
	}
	jsonEq(t, f.body(prompt), `{"prompt":"and now?","session_id":"`+sid+`"}`)
	if _, errOut, code := clitest.RunInput(t, env, "piped\n", "prompt", "agent"); code != cli.ExitOK {
		t.Fatalf("piped: exit %d %s", code, errOut)
	}
	jsonEq(t, f.body(prompt), `{"prompt":"piped"}`)

	// --json: the events themselves.
	out = clitest.MustRun(t, env, "prompt", "agent", "again", "--json")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("--json:\n%s", out)
	}
	for i, l := range lines {
		ev := decode[client.SessionEvent](t, l)
		if ev.Seq == 0 || (i == 0 && (ev.Role != "user" || ev.Text != "again")) || (i == 6 && ev.Done == nil) {
			t.Fatalf("event %d: %s", i, l)
		}
	}

	// -o json: the result once the turn ends.
	res := clitest.JSON[client.PromptResult](t, env, "prompt", "agent", "once more")
	if res.Result != "Two Go files." || res.Session.Status != client.SessionCompleted || len(res.Events) != 7 || res.Usage == nil {
		t.Fatalf("result %+v", res)
	}
}

func TestPromptFailures(t *testing.T) {
	f, env := startCapabilityAPI(t)
	tests := []struct {
		name   string
		setup  func()
		stdin  string
		args   []string
		code   int
		stderr string // what stderr ends with
	}{
		{
			name: "a failed turn", setup: func() { f.turn = aFailedTurn },
			args: []string{"prompt", "agent", "hi"}, code: cli.ExitError,
			stderr: "error: rate limited (harness_failed)\nsession " + fakeID(5) + " (continue with --session " + fakeID(5) + ")\n",
		},
		{
			name: "a harness that exits non-zero", setup: func() {
				f.turn = func(client.PromptRequest) []client.SessionEvent {
					return []client.SessionEvent{{Type: client.SessionEventDone, Done: &client.TurnDone{ExitCode: 2}}}
				}
			},
			args: []string{"task", "agent", "hi"}, code: cli.ExitError,
			stderr: "session " + fakeID(6) + "\npaddock: the turn failed (the harness exited 2)\n",
		},
		{
			name: "a failed turn as JSON", setup: func() { f.turn = aFailedTurn },
			args: []string{"task", "agent", "hi", "-o", "json"}, code: cli.ExitError,
		},
		{
			name: "a failed turn as NDJSON", setup: func() { f.turn = aFailedTurn },
			args: []string{"task", "agent", "hi", "--json"}, code: cli.ExitError,
		},
		{
			name: "a stream cut off", setup: func() { f.turn, f.cut = aTurn, true },
			args: []string{"task", "agent", "hi"}, code: cli.ExitError,
			stderr: "error: the event stream ended before the turn did: unexpected EOF\n",
		},
		{
			name: "no model credentials", setup: func() {
				f.cut, f.refuse = false, &client.Error{StatusCode: http.StatusUnprocessableEntity, Code: "harness_secret_missing", Message: "claude needs ANTHROPIC_API_KEY"}
			},
			args: []string{"prompt", "agent", "hi"}, code: cli.ExitError,
			stderr: "error: claude needs ANTHROPIC_API_KEY (harness_secret_missing)\n",
		},
		{
			name: "an unknown session", setup: func() { f.refuse = nil },
			args: []string{"prompt", "agent", "hi", "--session", "nope"}, code: cli.ExitError,
			stderr: "error: session nope not found (session_not_found)\n",
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				f.mu.Lock()
				tt.setup()
				f.mu.Unlock()
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
