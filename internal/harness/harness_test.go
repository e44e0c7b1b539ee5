package harness

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/capability"
)

func TestRegistry(t *testing.T) {
	var names []string
	for _, h := range All() {
		names = append(names, h.Name)
		if h.Binary == "" || len(h.Secrets) == 0 || h.WrittenAgainst == "" || h.Package == "" || h.Description == "" {
			t.Errorf("%s: incomplete: %+v", h.Name, h)
		}
		if got, ok := Lookup(h.Name); !ok || got != h {
			t.Errorf("Lookup(%q) = %v, %v", h.Name, got, ok)
		}
	}
	if want := []string{"claude-code", "codex", "opencode", "gemini", "kimi"}; !reflect.DeepEqual(names, want) {
		t.Errorf("All() = %v, want %v", names, want)
	}
	if names[0] != Default {
		t.Errorf("the default %q is not first", Default)
	}
	if _, ok := Lookup("cursor"); ok {
		t.Error("Lookup found an unknown harness")
	}
	All()[0] = nil // All returns a copy
	if All()[0] == nil {
		t.Error("All() exposes the registry")
	}
}

func TestCommand(t *testing.T) {
	capRoot := "/workspace/.paddock/capabilities"
	servers := []capability.ResolvedMCPServer{
		{MCPServer: capability.MCPServer{Name: "files", Type: "stdio", Command: "files-mcp", Args: []string{"--root", `C:\x "y"`}, Env: map[string]string{"B": "2", "A": "1"}}},
		{MCPServer: capability.MCPServer{Name: "search.web", Type: "http", URL: "http://127.0.0.1:9/mcp"}},
	}
	full := Invocation{Prompt: "-fix it", ResumeID: "abc", Model: "m1", Workdir: "/workspace", CapRoot: capRoot, HasMCP: true, MCPServers: servers}
	bare := Invocation{Prompt: "hi", Workdir: "/workspace", CapRoot: capRoot}
	tests := []struct {
		harness string
		inv     Invocation
		argv    []string
		env     map[string]string
	}{
		{"claude-code", full,
			[]string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions",
				"--model", "m1", "--mcp-config", capRoot + "/mcp.json", "--resume", "abc", "--", "-fix it"},
			map[string]string{"IS_SANDBOX": "1"}},
		{"claude-code", bare,
			[]string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--", "hi"},
			map[string]string{"IS_SANDBOX": "1"}},
		{"codex", full,
			[]string{"codex", "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
				"--cd", "/workspace", "--model", "m1",
				"-c", `mcp_servers={ "files" = { command = "files-mcp", args = ["--root", "C:\\x \"y\""], env = { "A" = "1", "B" = "2" } }, "search.web" = { url = "http://127.0.0.1:9/mcp" } }`,
				"resume", "abc", "--", "-fix it"},
			map[string]string{}},
		{"codex", bare,
			[]string{"codex", "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--cd", "/workspace", "--", "hi"},
			map[string]string{}},
		{"opencode", full,
			[]string{"opencode", "run", "--format", "json", "--auto", "--dir", "/workspace", "--model", "m1", "--session", "abc", "--", "-fix it"},
			map[string]string{"OPENCODE_CONFIG": capRoot + "/opencode.json"}},
		{"opencode", bare,
			[]string{"opencode", "run", "--format", "json", "--auto", "--dir", "/workspace", "--", "hi"},
			map[string]string{}},
		{"gemini", full,
			[]string{"gemini", "--output-format", "stream-json", "--approval-mode", "yolo", "--model", "m1", "--resume", "abc", "--prompt=-fix it"},
			map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_SYSTEM_SETTINGS_PATH": capRoot + "/gemini/settings.json"}},
		{"gemini", bare,
			[]string{"gemini", "--output-format", "stream-json", "--approval-mode", "yolo", "--prompt=hi"},
			map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"}},
		// Kimi Code has no work-dir or MCP flag and approves tools itself in
		// prompt mode (see kimi.go).
		{"kimi", full,
			[]string{"kimi", "--output-format", "stream-json", "--session", "abc", "--prompt=-fix it"},
			map[string]string{"KIMI_MODEL_NAME": "m1", "KIMI_BASE_URL": kimiDefaultBaseURL, "KIMI_CODE_NO_AUTO_UPDATE": "1", "KIMI_DISABLE_TELEMETRY": "1"}},
		{"kimi", bare,
			[]string{"kimi", "--output-format", "stream-json", "--prompt=hi"},
			map[string]string{"KIMI_MODEL_NAME": kimiDefaultModel, "KIMI_BASE_URL": kimiDefaultBaseURL, "KIMI_CODE_NO_AUTO_UPDATE": "1", "KIMI_DISABLE_TELEMETRY": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.harness+"/"+tt.inv.Prompt, func(t *testing.T) {
			h, _ := Lookup(tt.harness)
			argv, env := h.Command(tt.inv)
			if !reflect.DeepEqual(argv, tt.argv) {
				t.Errorf("argv\n got %q\nwant %q", argv, tt.argv)
			}
			if !reflect.DeepEqual(env, tt.env) {
				t.Errorf("env %v, want %v", env, tt.env)
			}
			if argv[0] != h.Binary {
				t.Errorf("argv[0] %q, want the binary %q", argv[0], h.Binary)
			}
		})
	}
}

// TestEndpoint: a turn watches the endpoint of the credential its CLI
// uses, and nothing when that cannot be told or a base-URL variable sends
// the CLI elsewhere.
func TestEndpoint(t *testing.T) {
	for _, tc := range []struct {
		harness, model string
		envs           []string
		want           string // host:port; "" when nothing is watched
	}{
		{"claude-code", "", []string{"ANTHROPIC_API_KEY"}, "api.anthropic.com:443"},
		{"claude-code", "", []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}, "api.anthropic.com:443"},
		{"claude-code", "", []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}, ""},
		{"claude-code", "", []string{"OPENAI_API_KEY"}, ""},
		// OpenCode using OpenAI is not ended by a refusal of Anthropic's host.
		{"opencode", "", []string{"OPENAI_API_KEY"}, "api.openai.com:443"},
		{"opencode", "openai/gpt-5", []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}, "api.openai.com:443"},
		{"opencode", "anthropic/claude-sonnet-4-5", []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}, "api.anthropic.com:443"},
		{"opencode", "openai/gpt-5", []string{"ANTHROPIC_API_KEY"}, ""},
		{"opencode", "", []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}, ""},
		{"opencode", "openai/gpt-5", []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"}, ""},
		{"codex", "", []string{"CODEX_API_KEY"}, "api.openai.com:443"},
		{"codex", "", []string{"CODEX_API_KEY", "CODEX_ACCESS_TOKEN"}, ""},
		{"codex", "", []string{"CODEX_API_KEY", "OPENAI_BASE_URL"}, ""},
		{"kimi", "", []string{"KIMI_MODEL_API_KEY", "KIMI_MODEL_BASE_URL"}, ""},
		{"gemini", "", []string{"GEMINI_API_KEY"}, "generativelanguage.googleapis.com:443"},
	} {
		h, _ := Lookup(tc.harness)
		e, ok := h.Endpoint(tc.model, tc.envs)
		got := ""
		if ok {
			got = fmt.Sprintf("%s:%d", e.Host, e.Port)
		}
		if got != tc.want {
			t.Errorf("%s %q %v: %q, want %q", tc.harness, tc.model, tc.envs, got, tc.want)
		}
	}
}
