package harness

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/paddockhq/paddock/internal/capability"
)

// Codex CLI, followed from openai/codex main after --full-auto was removed
// (cli.rs keeps only a hidden trap for it, which happened around 0.153), so
// close to the 0.169.0 on npm. Sources:
//
//   - codex-rs/exec/src/cli.rs: `codex exec [OPTIONS] [PROMPT]`,
//     `codex exec resume <SESSION_ID> [PROMPT]`; --json, --skip-git-repo-check,
//     -m/--model and --dangerously-bypass-approvals-and-sandbox are global, so
//     they may come before the subcommand; -C/--cd is not, so it does too.
//   - codex-rs/utils/cli/src/config_override.rs: `-c key=value`, the key a
//     dotted path split on ".", the value parsed as TOML (inline tables too).
//   - codex-rs/exec/src/lib.rs: headless exec never asks for approval; with
//     --dangerously-bypass-approvals-and-sandbox the git-repo check is skipped
//     too; a piped stdin is appended to the prompt, so it must be empty;
//     a failed turn or a non-retried error exits 1; a resume id that parses
//     as a UUID goes to thread/resume, whose failure ends the run with
//     "Error: thread/resume: thread/resume failed: no rollout found for
//     thread id <id> (code -32600)" on stderr and exit 1 (captured from
//     0.169.0: testdata/codex/captured-0.169.0-resume-unknown.*).
//   - codex-rs/exec/src/exec_events.rs and event_processor_with_jsonl_output.rs:
//     thread.started{thread_id}, turn.started, item.started/updated/completed
//     {item:{id,type,…}} with types agent_message, reasoning,
//     command_execution{command,aggregated_output,exit_code,status},
//     file_change{changes,status}, mcp_tool_call{server,tool,arguments,
//     result{content},error,status}, web_search{query}, todo_list, error;
//     turn.completed{usage{input_tokens,cached_input_tokens,output_tokens}},
//     turn.failed{error{message}}, and error{message}, which is also sent for
//     errors the CLI retries ("Reconnecting…"), so the parser holds it until
//     the turn ends.
//   - developers.openai.com/codex/environment-variables: CODEX_API_KEY is the
//     API key for exec; CODEX_ACCESS_TOKEN a ChatGPT/Codex token. CODEX_HOME
//     (default ~/.codex) holds config, auth and sessions. Without credentials
//     the model request fails with 401 (the exact text is not confirmed).
//   - OPENAI_API_KEY is not a credential of exec: 0.169.0 run against a
//     loopback endpoint (-c openai_base_url=…), and against api.openai.com
//     itself through a proxy that reads the tunnels, sends no Authorization
//     with it and "Bearer <key>" with CODEX_API_KEY
//     (testdata/codex/captured-0.169.0-openai-api-key*.requests); `codex
//     doctor` lists it among the auth variables present, but its endpoint
//     check says "auth mode none". So it is Unread, not a Secret.
//
// MCP servers: CODEX_HOME=<CapRoot>/codex would load codex/config.toml, but
// it would also move auth.json and the sessions the next turn resumes into
// the capabilities tree, which is rebuilt for each sandbox. Command passes
// the servers as one `-c mcp_servers={…}` override instead (one inline table,
// so server names with dots survive the dotted-path split). It replaces any
// mcp_servers of ~/.codex/config.toml, which paddock does not write.
var codex = &Harness{
	Name:    "codex",
	Binary:  "codex",
	Secrets: []string{"CODEX_API_KEY", "CODEX_ACCESS_TOKEN"},
	Unread:  []string{"OPENAI_API_KEY"},
	Endpoints: []Endpoint{
		{Secret: "CODEX_API_KEY", Host: "api.openai.com", BaseURLs: []string{"OPENAI_BASE_URL"}},
		{Secret: "CODEX_ACCESS_TOKEN", Host: "chatgpt.com", BaseURLs: []string{"OPENAI_BASE_URL"}},
	},
	WrittenAgainst: "0.169.0",
	Package:        "@openai/codex",
	Description:    "OpenAI's Codex CLI (codex exec --json)",
	command:        codexCommand,
	newParser:      func(h *Harness) Parser { return &codexParser{turn: turn{h: h}, started: map[string]bool{}} },
}

func codexCommand(inv Invocation) ([]string, map[string]string) {
	argv := []string{"codex", "exec", "--json",
		"--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox"}
	if inv.Workdir != "" {
		argv = append(argv, "--cd", inv.Workdir)
	}
	if inv.Model != "" {
		argv = append(argv, "--model", inv.Model)
	}
	if inv.HasMCP && len(inv.MCPServers) > 0 {
		argv = append(argv, "-c", "mcp_servers="+codexMCPTable(inv.MCPServers))
	}
	if inv.ResumeID != "" {
		argv = append(argv, "resume", inv.ResumeID)
	}
	argv = append(argv, "--", inv.Prompt)
	return argv, map[string]string{}
}

// codexMCPTable renders servers as a TOML inline table in the shape of
// config.toml's [mcp_servers.<name>]: command, args, env for stdio; url for
// streamable HTTP.
func codexMCPTable(servers []capability.ResolvedMCPServer) string {
	var entries []string
	for _, s := range servers {
		var fields []string
		if s.URL != "" && s.Type != "stdio" {
			fields = append(fields, "url = "+tomlString(s.URL))
		} else {
			fields = append(fields, "command = "+tomlString(s.Command))
			if len(s.Args) > 0 {
				args := make([]string, len(s.Args))
				for i, a := range s.Args {
					args[i] = tomlString(a)
				}
				fields = append(fields, "args = ["+strings.Join(args, ", ")+"]")
			}
			if len(s.Env) > 0 {
				keys := make([]string, 0, len(s.Env))
				for k := range s.Env {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				env := make([]string, len(keys))
				for i, k := range keys {
					env[i] = tomlString(k) + " = " + tomlString(s.Env[k])
				}
				fields = append(fields, "env = { "+strings.Join(env, ", ")+" }")
			}
		}
		entries = append(entries, tomlString(s.Name)+" = { "+strings.Join(fields, ", ")+" }")
	}
	return "{ " + strings.Join(entries, ", ") + " }"
}

// tomlString quotes s as a TOML basic string: quote, backslash and control
// characters escaped, everything else (non-ASCII included) kept as is.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

type codexParser struct {
	turn
	started map[string]bool // tool items whose call was emitted
	pending string          // the last error event, until the turn ends
}

type codexLine struct {
	Type     string     `json:"type"`
	ThreadID string     `json:"thread_id"`
	Item     *codexItem `json:"item"`
	Usage    *struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
	Error   *struct{ Message string } `json:"error"`
	Message string                    `json:"message"`
}

type codexItem struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	Text             string          `json:"text"`
	Command          string          `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Query   string `json:"query"`
	Changes []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

// call is the tool call an item stands for, if it is a tool item.
func (it *codexItem) call() (name string, input json.RawMessage, ok bool) {
	switch it.Type {
	case "command_execution":
		input, _ = json.Marshal(map[string]string{"command": it.Command})
		return "shell", input, true
	case "mcp_tool_call":
		return it.Server + "." + it.Tool, it.Arguments, true
	case "web_search":
		input, _ = json.Marshal(map[string]string{"query": it.Query})
		return "web_search", input, true
	case "file_change":
		input, _ = json.Marshal(map[string]any{"changes": it.Changes})
		return "apply_patch", input, true
	}
	return "", nil, false
}

// result is the tool result a completed tool item carries.
func (it *codexItem) result() (output string, isError bool) {
	switch it.Type {
	case "command_execution":
		failed := it.Status == "failed" || it.Status == "declined" || (it.ExitCode != nil && *it.ExitCode != 0)
		return it.AggregatedOutput, failed
	case "mcp_tool_call":
		if it.Error != nil {
			return it.Error.Message, true
		}
		var parts []string
		if it.Result != nil {
			for _, c := range it.Result.Content {
				if c.Type == "text" {
					parts = append(parts, c.Text)
				}
			}
		}
		return strings.Join(parts, "\n"), it.Status == "failed"
	case "file_change":
		var lines []string
		for _, c := range it.Changes {
			lines = append(lines, c.Kind+" "+c.Path)
		}
		return strings.Join(lines, "\n"), it.Status == "failed"
	case "web_search":
		return it.Query, false
	}
	return "", false
}

func (p *codexParser) Feed(line []byte) []Event {
	var l codexLine
	if !p.decode(line, &l) {
		return nil
	}
	switch l.Type {
	case "thread.started":
		p.sessionID = l.ThreadID
	case "item.started":
		if l.Item == nil {
			return nil
		}
		if name, input, ok := l.Item.call(); ok && l.Item.Type != "file_change" {
			p.started[l.Item.ID] = true
			return []Event{toolCall(l.Item.ID, name, input)}
		}
	case "item.completed":
		if l.Item == nil {
			return nil
		}
		if l.Item.Type == "agent_message" {
			return p.message(l.Item.Text)
		}
		name, input, ok := l.Item.call()
		if !ok {
			// reasoning, todo_list, and error items (non-fatal warnings
			// such as config or deprecation notices) are not transcript
			// events.
			return nil
		}
		var out []Event
		if !p.started[l.Item.ID] {
			out = append(out, toolCall(l.Item.ID, name, input))
		}
		delete(p.started, l.Item.ID)
		output, isErr := l.Item.result()
		return append(out, toolResult(l.Item.ID, output, isErr))
	case "turn.completed":
		p.pending = ""
		if l.Usage != nil {
			return []Event{usage(TurnUsage{
				InputTokens:     l.Usage.InputTokens,
				OutputTokens:    l.Usage.OutputTokens,
				CacheReadTokens: l.Usage.CachedInputTokens,
			})}
		}
	case "turn.failed":
		msg := p.pending
		if l.Error != nil && l.Error.Message != "" {
			msg = l.Error.Message
		}
		p.pending = ""
		if msg == "" {
			msg = "turn failed"
		}
		return p.fail("", msg)
	case "error":
		p.pending = l.Message
	}
	return nil
}

func (p *codexParser) Finish(exitCode int, stderrTail string) []Event {
	var out []Event
	if exitCode != 0 && !p.errored && p.pending != "" {
		out = p.fail("", p.pending)
	}
	return append(out, p.finish(exitCode, stderrTail)...)
}
