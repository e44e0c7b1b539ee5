package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Expected-event builders, to keep the table readable.

func msg(text string) Event {
	return Event{Type: EventMessage, Role: "assistant", Text: text}
}

func call(id, name, input string) Event {
	var raw json.RawMessage
	if input != "" {
		raw = json.RawMessage(input)
	}
	return Event{Type: EventToolCall, Tool: &ToolCall{ID: id, Name: name, Input: raw}}
}

func result(id, output string, isErr bool) Event {
	return Event{Type: EventToolResult, Result: &ToolResult{ID: id, Output: output, IsError: isErr}}
}

func used(in, out, cached int64, cost float64) Event {
	return Event{Type: EventUsage,
		Usage: &TurnUsage{InputTokens: in, OutputTokens: out, CacheReadTokens: cached, CostUSD: cost}}
}

func failed(code, message string) Event {
	return Event{Type: EventError, Error: &TurnError{Code: code, Message: message}}
}

func done(exit int, session, res string) Event {
	return Event{Type: EventDone,
		Done: &TurnDone{ExitCode: exit, HarnessSessionID: session, Result: res}}
}

// parse feeds a fixture (or nothing, for "") through h's parser.
func parse(t *testing.T, h *Harness, fixture string, exitCode int, stderr string) []Event {
	t.Helper()
	p := h.NewParser()
	var events []Event
	if fixture != "" {
		data, err := os.ReadFile(filepath.Join("testdata", h.Name, fixture))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			events = append(events, p.Feed(sc.Bytes())...)
		}
	}
	return append(events, p.Finish(exitCode, stderr)...)
}

// The ids and texts of the fixtures parserCases read.
const (
	claudeSession   = "3f6c1f9e-5d2a-4c55-9a51-0d1b8b7c2e10"
	codexThread     = "0199a213-81c0-7800-8aa1-bbab2a035a53"
	geminiSession   = "c5a1e7f2-3b4d-4e6f-8a9b-0c1d2e3f4a5b"
	openCodeSession = "ses_6a1f0c2e3ffeQ8rT2yU4iO6pA1"
	listing         = "README.md\ngo.mod\nmain.go"
	final           = "The workspace has README.md, go.mod and main.go."
)

// parserCases are what each parser makes of a fixture (testdata/<harness>/)
// and of how its CLI ended.
var parserCases = []struct {
	harness, name string
	fixture       string
	exitCode      int
	stderr        string
	want          []Event
}{
	{
		harness: "claude-code", name: "tool turn", fixture: "turn.jsonl",
		want: []Event{
			msg("I'll list the files in the workspace."),
			call("toolu_01A9ZkWq3s5R7tY1uI2oP4aS", "Bash", `{"command":"ls -1","description":"List files in the workspace"}`),
			result("toolu_01A9ZkWq3s5R7tY1uI2oP4aS", listing, false),
			msg("The workspace has three files: README.md, go.mod and main.go."),
			used(10+2450+24550, 116, 24550, 0.0141873),
			done(0, claudeSession, "The workspace has three files: README.md, go.mod and main.go."),
		},
	},
	{
		harness: "claude-code", name: "not logged in", fixture: "auth.jsonl", exitCode: 1,
		want: []Event{
			failed(CodeUnauthenticated, "Not logged in · Please run /login (claude needs one of ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN)"),
			used(0, 0, 0, 0),
			done(1, "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d", ""),
		},
	},
	{
		harness: "codex", name: "tool turn", fixture: "turn.jsonl",
		want: []Event{
			msg("I'll list the files in the workspace."),
			call("item_2", "shell", `{"command":"bash -lc 'ls -1'"}`),
			result("item_2", listing+"\n", false),
			call("item_3", "files.read", `{"path":"README.md"}`),
			result("item_3", "# demo", false),
			msg("The workspace has README.md, go.mod and main.go."),
			used(24763, 122, 24448, 0),
			done(0, codexThread, final),
		},
	},
	{
		harness: "codex", name: "401", fixture: "auth.jsonl", exitCode: 1,
		want: []Event{
			failed(CodeUnauthenticated, "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header, url: https://api.openai.com/v1/responses (codex needs one of CODEX_API_KEY, CODEX_ACCESS_TOKEN)"),
			done(1, "0199a214-0a1b-7c2d-9e3f-4a5b6c7d8e9f", ""),
		},
	},
	{
		harness: "codex", name: "retried error is not a failure", fixture: "retry.jsonl",
		want: []Event{
			msg("Done."),
			used(100, 2, 0, 0),
			done(0, "0199a215-1b2c-7d3e-8f4a-5b6c7d8e9f0a", "Done."),
		},
	},
	{
		harness: "codex", name: "unknown resume id", exitCode: 1,
		stderr: "Error: thread/resume: thread/resume failed: no rollout found for thread id 0199a216-0000-7000-8000-000000000000 (code -32600)\n",
		want: []Event{
			failed(CodeSessionNotFound, "Error: thread/resume: thread/resume failed: no rollout found for thread id 0199a216-0000-7000-8000-000000000000 (code -32600)"),
			done(1, "", ""),
		},
	},
	{
		harness: "gemini", name: "tool turn", fixture: "turn.jsonl",
		want: []Event{
			msg("I'll list the files in the workspace."),
			call("run_shell_command-1754474401400-3f2a1b0c9d8e", "run_shell_command", `{"command":"ls -1","description":"List the files in the workspace."}`),
			result("run_shell_command-1754474401400-3f2a1b0c9d8e", listing, false),
			call("read_file-1754474402000-a1b2c3d4e5f6", "read_file", `{"absolute_path":"/workspace/missing.txt"}`),
			result("read_file-1754474402000-a1b2c3d4e5f6", "File not found: /workspace/missing.txt", true),
			msg(final),
			used(8000, 123, 4096, 0),
			done(0, geminiSession, final),
		},
	},
	{
		harness: "gemini", name: "api error", fixture: "apierror.jsonl", exitCode: 1,
		want: []Event{
			used(0, 0, 0, 0),
			failed(CodeUnauthenticated, "[API Error: API key not valid. Please pass a valid API key.] (gemini needs one of GEMINI_API_KEY)"),
			done(1, "d6b2f803-4c5e-4f70-9bac-1d2e3f4a5b6c", ""),
		},
	},
	{
		harness: "gemini", name: "no auth method", exitCode: 41,
		stderr: "Please set an Auth method in your /root/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA\n",
		want: []Event{
			failed(CodeUnauthenticated, "Please set an Auth method in your /root/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA"),
			done(41, "", ""),
		},
	},
	{
		harness: "opencode", name: "tool turn", fixture: "turn.jsonl",
		want: []Event{
			msg("I'll list the files in the workspace."),
			call("toolu_01A9ZkWq3s5R7tY1uI2oP4aS", "bash", `{"command":"ls -1","description":"Lists files in the workspace"}`),
			result("toolu_01A9ZkWq3s5R7tY1uI2oP4aS", listing+"\n", false),
			call("toolu_01B8YjVp2r4Q6sX0tH1nO3zR", "read", `{"filePath":"/workspace/missing.txt"}`),
			result("toolu_01B8YjVp2r4Q6sX0tH1nO3zR", "File not found: /workspace/missing.txt", true),
			msg(final),
			used(1510+11000+2300+120+13300, 95+30, 11000+13300, 0.0121+0.0042),
			done(0, openCodeSession, final),
		},
	},
	{
		harness: "opencode", name: "provider auth", fixture: "auth.jsonl", exitCode: 1,
		want: []Event{
			failed(CodeUnauthenticated, "Missing API key (opencode needs one of ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY, OPENCODE_API_KEY)"),
			done(1, "ses_6a1f0d113ffeW9xY1zA3bC5dE7", ""),
		},
	},
	{
		harness: "opencode", name: "unknown session", exitCode: 1, stderr: "Error: Session not found\n",
		want: []Event{
			failed(CodeSessionNotFound, "Error: Session not found"),
			done(1, "", ""),
		},
	},
	// Kimi Code's stream-json, as kimi 2.1.0 printed it (against a local
	// provider stand-in; see kimi.go). Errors are on stderr only.
	{
		harness: "kimi", name: "tool turn", fixture: "turn.jsonl",
		want: []Event{
			msg("I'll list the files in the workspace."),
			call("call_abc123", "Bash", `{"command":"ls -1"}`),
			result("call_abc123", listing+"\n", false),
			call("call_def456", "Read", `{"path":"/workspace/missing.txt"}`),
			result("call_def456", `"/workspace/missing.txt" does not exist.`, false),
			msg(final),
			done(0, "session_6648251c-da02-4bfb-9667-46241fd1bbea", final),
		},
	},
	{
		harness: "kimi", name: "no api key", fixture: "auth.jsonl", exitCode: 1,
		stderr: "error: failed to run prompt: provider __kimi_env__ has no credential configured\nSee log: /workspace/.kimi-code/logs/kimi-code.log\n",
		want: []Event{
			failed(CodeUnauthenticated, "provider __kimi_env__ has no credential configured (kimi needs one of KIMI_MODEL_API_KEY)"),
			done(1, "", ""),
		},
	},
	{
		harness: "kimi", name: "no model", exitCode: 1,
		stderr: "kimi version 2.1.0\nerror: failed to run prompt: No model configured. Run `kimi` and use /login to sign in, then retry; or set default_model in config.toml.\nSee log: /workspace/.kimi-code/logs/kimi-code.log\n",
		want: []Event{
			failed(CodeUnauthenticated, "No model configured. Run `kimi` and use /login to sign in, then retry; or set default_model in config.toml. (kimi needs one of KIMI_MODEL_API_KEY)"),
			done(1, "", ""),
		},
	},
	{
		harness: "kimi", name: "api error mid-turn", fixture: "apierror.jsonl", exitCode: 1,
		stderr: "a\nb\nerror: failed to run prompt: provider.api_error: 400 Invalid request: bad thing\nSee log: /workspace/.kimi-code/logs/kimi-code.log\n",
		want: []Event{
			msg("I will list the files."),
			call("call_abc123", "Bash", `{"command":"ls -1"}`),
			result("call_abc123", "a\nb\n", false),
			failed("provider.api_error", "provider.api_error: 400 Invalid request: bad thing"),
			done(1, "", "I will list the files."),
		},
	},
	{
		harness: "kimi", name: "401", fixture: "auth.jsonl", exitCode: 1,
		stderr: "error: failed to run prompt: provider.auth_error: 401 Invalid Authentication\nSee log: /workspace/.kimi-code/logs/kimi-code.log\n",
		want: []Event{
			failed(CodeUnauthenticated, "provider.auth_error: 401 Invalid Authentication (kimi needs one of KIMI_MODEL_API_KEY)"),
			done(1, "", ""),
		},
	},
	{
		harness: "kimi", name: "unknown resume id", fixture: "auth.jsonl", exitCode: 1,
		stderr: "error: failed to run prompt: Session \"session_00000000-0000-4000-8000-000000000000\" not found.\nSee log: /workspace/.kimi-code/logs/kimi-code.log\n",
		want: []Event{
			failed(CodeSessionNotFound, `Session "session_00000000-0000-4000-8000-000000000000" not found.`),
			done(1, "", ""),
		},
	},
	{
		harness: "kimi", name: "usage error", exitCode: 1,
		stderr: "error: unknown option '--print'\n(Did you mean --prompt?)\n",
		want: []Event{
			failed(CodeFailed, "unknown option '--print'"),
			done(1, "", ""),
		},
	},
}

func TestParsers(t *testing.T) {
	for _, tt := range parserCases {
		t.Run(tt.harness+"/"+tt.name, func(t *testing.T) {
			h, ok := Lookup(tt.harness)
			if !ok {
				t.Fatalf("no harness %q", tt.harness)
			}
			got := parse(t, h, tt.fixture, tt.exitCode, tt.stderr)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events:\n got %s\nwant %s", dump(got), dump(tt.want))
			}
		})
	}
}

func dump(events []Event) string {
	var b bytes.Buffer
	for _, e := range events {
		j, _ := json.Marshal(e)
		b.WriteString("\n  ")
		b.Write(j)
	}
	return b.String()
}

// TestParsersNeverPanic feeds every parser lines it does not expect.
func TestParsersNeverPanic(t *testing.T) {
	lines := []string{
		"", "   ", "plain text", "{", "{}", "[]", "null", `"string"`, "42",
		`{"type":null}`, `{"type":"assistant"}`, `{"type":"assistant","message":{"content":7}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","input":"not json"}]}}`,
		`{"type":"user","message":{"content":"hi"}}`, `{"type":"result","usage":"x"}`,
		`{"type":"item.completed"}`, `{"type":"item.completed","item":{"type":"mcp_tool_call","result":{"content":"x"}}}`,
		`{"type":"turn.failed","error":null}`, `{"type":"tool_use","part":{"state":null}}`,
		`{"type":"step_finish","part":{"tokens":{"cache":null}}}`, `{"type":"result","status":"error","error":"x"}`,
		`{"role":"assistant","content":{"x":1},"tool_calls":[{"function":{"arguments":null}}]}`,
		`{"role":"tool","content":[{"type":"text"}]}`, `{"role":"assistant","tool_calls":[{"function":{"arguments":{"a":1}}}]}`,
		`{"role":"meta","type":"session.resume_hint","session_id":7}`, `{"type":"goal.summary","goalId":null}`, "\x00\xff\xfe",
	}
	for _, h := range All() {
		t.Run(h.Name, func(t *testing.T) {
			p := h.NewParser()
			for _, l := range lines {
				p.Feed([]byte(l))
			}
			events := p.Finish(3, "boom\n")
			last := events[len(events)-1]
			if last.Type != EventDone || last.Done.ExitCode != 3 {
				t.Errorf("last event %+v, want done with exit code 3", last)
			}
		})
	}
}
