package capability

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// The MCP configuration of each agent harness, each in the format its CLI
// documents. Every writer sorts servers and keys, so equal sets give equal
// bytes.

// claudeMCPConfig is the .mcp.json format of Claude Code, read with
// --mcp-config <file>: {"mcpServers": {name: {"command", "args", "env"} |
// {"type": "http", "url"}}}. Checked against the Claude Code MCP
// documentation (docs.anthropic.com, claude-code/mcp and sdk-mcp pages,
// 2025-2026; the pages name no CLI version). Kimi Code 2.1.0 reads the same
// "mcpServers" format from ~/.kimi-code/mcp.json only (checked against the
// installed package; see internal/harness/kimi.go).
func claudeMCPConfig(servers []ResolvedMCPServer) []byte {
	type server struct {
		Type    string            `json:"type,omitempty"`
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		URL     string            `json:"url,omitempty"`
	}
	out := map[string]server{}
	for _, s := range servers {
		if s.Type == MCPHTTP {
			out[s.Name] = server{Type: "http", URL: s.URL}
		} else {
			out[s.Name] = server{Command: s.Command, Args: s.Args, Env: s.Env}
		}
	}
	return marshalJSON(map[string]any{"mcpServers": out})
}

// openCodeConfig is an OpenCode config file, read from the path in
// OPENCODE_CONFIG: {"$schema": "https://opencode.ai/config.json", "mcp":
// {name: {"type": "local", "command": [command, args...], "environment",
// "enabled"} | {"type": "remote", "url", "enabled"}}}. Checked against
// opencode.ai/docs/mcp-servers and its config.json schema (2026; local and
// remote entries allow no other keys, and there is no separate "args").
func openCodeConfig(servers []ResolvedMCPServer) []byte {
	type server struct {
		Type        string            `json:"type"`
		Command     []string          `json:"command,omitempty"`
		Environment map[string]string `json:"environment,omitempty"`
		URL         string            `json:"url,omitempty"`
		Enabled     bool              `json:"enabled"`
	}
	out := map[string]server{}
	for _, s := range servers {
		if s.Type == MCPHTTP {
			out[s.Name] = server{Type: "remote", URL: s.URL, Enabled: true}
		} else {
			out[s.Name] = server{Type: "local", Command: append([]string{s.Command}, s.Args...), Environment: s.Env, Enabled: true}
		}
	}
	return marshalJSON(struct {
		Schema string            `json:"$schema"`
		MCP    map[string]server `json:"mcp"`
	}{"https://opencode.ai/config.json", out})
}

// geminiSettings is a Gemini CLI settings.json: {"mcpServers": {name:
// {"command", "args", "env"} | {"httpUrl"}}}; "httpUrl" is its streamable
// HTTP transport ("url" would be SSE). Checked against
// google-gemini/gemini-cli docs/tools/mcp-server.md and
// docs/cli/configuration.md (main branch, 2026).
func geminiSettings(servers []ResolvedMCPServer) []byte {
	type server struct {
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		HTTPURL string            `json:"httpUrl,omitempty"`
	}
	out := map[string]server{}
	for _, s := range servers {
		if s.Type == MCPHTTP {
			out[s.Name] = server{HTTPURL: s.URL}
		} else {
			out[s.Name] = server{Command: s.Command, Args: s.Args, Env: s.Env}
		}
	}
	return marshalJSON(map[string]any{"mcpServers": out})
}

// codexConfig is a Codex config.toml, read from $CODEX_HOME/config.toml:
// one table [mcp_servers.<name>] per server, with command, args and env
// (an inline table) for stdio, url for streamable HTTP. Checked against
// openai/codex docs/config.md ("Connecting to MCP servers") and
// developers.openai.com/codex/mcp; these keys are reported accepted by
// Codex CLI 0.145 under --strict-config. Older Codex releases needed
// experimental_use_rmcp_client = true for url servers; it is not written.
func codexConfig(servers []ResolvedMCPServer) []byte {
	var b strings.Builder
	b.WriteString("# MCP servers of the capabilities bound to this runtime, written by paddock.\n")
	sorted := slices.SortedFunc(slices.Values(servers), func(a, b ResolvedMCPServer) int { return strings.Compare(a.Name, b.Name) })
	for _, s := range sorted {
		fmt.Fprintf(&b, "\n[mcp_servers.%s]\n", tomlKey(s.Name))
		if s.Type == MCPHTTP {
			fmt.Fprintf(&b, "url = %s\n", tomlString(s.URL))
			continue
		}
		fmt.Fprintf(&b, "command = %s\n", tomlString(s.Command))
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = tomlString(a)
		}
		fmt.Fprintf(&b, "args = [%s]\n", strings.Join(args, ", "))
		if len(s.Env) > 0 {
			var env []string
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				env = append(env, tomlKey(k)+" = "+tomlString(s.Env[k]))
			}
			fmt.Fprintf(&b, "env = { %s }\n", strings.Join(env, ", "))
		}
	}
	return []byte(b.String())
}

var bareKeyRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// tomlKey is a TOML key: bare when it can be, quoted otherwise.
func tomlKey(k string) string {
	if bareKeyRE.MatchString(k) {
		return k
	}
	return tomlString(k)
}

// tomlString is a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
