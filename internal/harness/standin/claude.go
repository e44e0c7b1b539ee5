package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Claude Code 2.1.332 in print mode (see internal/harness/claude.go).

const claudeVersion = "2.1.332"

var claudeFlags = flagSpec{
	"--print": false, "--output-format": true, "--input-format": true, "--verbose": false,
	"--dangerously-skip-permissions": false, "--allow-dangerously-skip-permissions": false,
	"--permission-mode": true, "--model": true, "--fallback-model": true,
	"--mcp-config": true, "--strict-mcp-config": false, "--resume": true, "--continue": false,
	"--session-id": true, "--fork-session": false, "--include-partial-messages": false,
	"--append-system-prompt": true, "--system-prompt": true, "--allowedTools": true,
	"--disallowedTools": true, "--add-dir": true, "--settings": true, "--max-turns": true,
	"--debug": false, "--version": false, "--help": false,
}

var claudeAliases = map[string]string{
	"-p": "--print", "-r": "--resume", "-c": "--continue", "-v": "--version",
	"-h": "--help", "-d": "--debug",
	"--allowed-tools": "--allowedTools", "--disallowed-tools": "--disallowedTools",
}

const claudeHelp = `Usage: claude [options] [command] [prompt]

Claude Code - starts an interactive session by default, use -p/--print for
non-interactive output (paddock stand-in: only --print is supported)

Arguments:
  prompt                            Your prompt

Options:
  -p, --print                       Print response and exit
  --output-format <format>          "text", "json" or "stream-json"
  --verbose                         Override verbose mode setting from config
  --dangerously-skip-permissions    Bypass all permission checks
  --permission-mode <mode>          Permission mode for the session
  --model <model>                   Model for the current session
  --mcp-config <configs...>         Load MCP servers from JSON files or strings
  -r, --resume [sessionId]          Resume a conversation
  -v, --version                     Output the version number
  -h, --help                        Display help for command
`

func claudeMain(args []string) int {
	p, err := parseArgs(args, claudeFlags, claudeAliases, nil)
	if err != nil {
		return claudeUsageError(err)
	}
	if code, done := claudeCheckMode(p); done {
		return code
	}
	prompt := strings.Join(p.pos, " ")
	dir := cwd()
	store := claudeStore{root: claudeConfigDir(), cwd: dir}
	sessionID, prev, turnN := uuid4(), "", 1
	if id := p.value("--resume"); id != "" {
		file, ok := store.find(id)
		if !ok {
			return claudeNoSession(id)
		}
		sessionID = id
		store.file = file
		prev, turnN = store.history()
	}
	if store.file == "" {
		store.file = store.path(sessionID)
	}

	out := newEmitter()
	model, secret := claudeInit(out, p, dir, sessionID)
	msg := claudeMessages{out: out, session: sessionID, model: model}

	if secret == "" {
		text := "Not logged in · Please run /login" // 2.1.332, exactly
		msg.assistantError("authentication_failed", text)
		msg.result(true, text, 0, 0)
		return 1
	}

	// 2.1.332 announces each retry as a system line, ten at most.
	reach := modelReach{host: "api.anthropic.com", retries: 10, onRetry: func(attempt int, delay time.Duration) {
		out.emit(obj{"type", "system", "subtype", "api_retry", "attempt", attempt, "max_retries", 10,
			"retry_delay_ms", delay.Milliseconds(), "error_status", nil, "error", "unknown",
			"session_id", sessionID, "uuid", uuid4()})
	}}
	if err := reach.reach(prompt); err != nil {
		text := "API Error: " + err.Error()
		var ps errProxyStatus
		if errors.As(err, &ps) {
			text = "API Error: Couldn't connect through your proxy (ERR_PROXY_TUNNEL) — the proxy refused the tunnel: check its credentials and that it allows this host"
		}
		msg.assistantError("server_error", text)
		msg.result(true, text, 0, 0)
		return 1
	}
	_ = store.append(obj{"type", "user", "message", obj{"role", "user", "content", prompt},
		"sessionId", sessionID, "cwd", dir, "uuid", uuid4(), "timestamp", nowISO(), "version", claudeVersion})
	return claudeAnswer(msg, store, prompt, dir, prev, turnN)
}

// claudeUsageError reports a flag parseArgs refused as commander.js does:
// "error: unknown option '--x'", exit code 1.
func claudeUsageError(err error) int {
	switch e := err.(type) {
	case errUnknownFlag:
		fmt.Fprintf(os.Stderr, "error: unknown option '%s'\n", e.arg)
	case errMissingValue:
		fmt.Fprintf(os.Stderr, "error: option '%s <value>' argument missing\n", e.arg)
	}
	return 1
}

// claudeBypass reports whether p asks to skip permission prompts.
func claudeBypass(p *parsed) bool {
	return p.has("--dangerously-skip-permissions") || p.value("--permission-mode") == "bypassPermissions"
}

// claudeCheckMode answers --version and --help, and refuses what the
// stand-in does not run: anything but print mode with stream-json, a
// bypass as root outside a sandbox, or no prompt. done says it answered,
// with exit code code.
func claudeCheckMode(p *parsed) (code int, done bool) {
	switch {
	case p.has("--version"):
		fmt.Println(claudeVersion + " (Claude Code)" + versionSuffix)
		return 0, true
	case p.has("--help"):
		fmt.Print(claudeHelp)
		return 0, true
	case !p.has("--print"):
		return fatalf("claude stand-in: only print mode (-p) is supported"), true
	}
	if p.value("--output-format") == "stream-json" && !p.has("--verbose") {
		return fatalf("Error: When using --print, --output-format=stream-json requires --verbose"), true
	}
	if p.value("--output-format") != "stream-json" {
		return fatalf("claude stand-in: only --output-format stream-json is supported"), true
	}
	if claudeBypass(p) && os.Getuid() == 0 && os.Getenv("IS_SANDBOX") != "1" {
		return fatalf("--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"), true
	}
	if strings.Join(p.pos, " ") == "" {
		return fatalf("Error: Input must be provided either through stdin or as a prompt argument when using --print"), true
	}
	return 0, false
}

// claudeNoSession answers a --resume of an unknown session as 2.1.332
// does: no init line, one result carrying errors[] on stdout, the same
// text on stderr, exit 1.
func claudeNoSession(id string) int {
	text := "No conversation found with session ID: " + id
	newEmitter().emit(obj{"type", "result", "subtype", "error_during_execution", "duration_ms", 0,
		"duration_api_ms", 0, "is_error", true, "num_turns", 0, "stop_reason", nil, "session_id", id,
		"total_cost_usd", 0, "usage", obj{"input_tokens", 0, "cache_creation_input_tokens", 0,
			"cache_read_input_tokens", 0, "output_tokens", 0, "service_tier", "standard"},
		"modelUsage", obj{}, "permission_denials", []any{}, "uuid", uuid4(),
		"errors", []string{text}, "result_index", 0})
	return fatalf("%s", text)
}

// claudeInit emits the init line of session sessionID in dir and returns
// the model it names and the credential found (empty: none).
func claudeInit(out *emitter, p *parsed, dir, sessionID string) (model, secret string) {
	var mcpServers []obj
	for _, cfg := range p.flags["--mcp-config"] {
		mcpServers = append(mcpServers, claudeMCP(cfg)...)
	}
	model = p.value("--model")
	if model == "" {
		model = "claude-sonnet-4-5-20250929"
	}
	permissionMode := "default"
	if claudeBypass(p) {
		permissionMode = "bypassPermissions"
	}
	secret = anyEnv("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
	apiKeySource := "none"
	if secret != "" {
		apiKeySource = secret
	}
	out.emit(obj{
		"type", "system", "subtype", "init", "cwd", dir, "session_id", sessionID,
		"tools", []string{"Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "WebFetch", "WebSearch", "TodoWrite"},
		"mcp_servers", orEmpty(mcpServers),
		"model", model,
		"permissionMode", permissionMode, "slash_commands", []string{"compact", "context", "cost", "init", "review"},
		"apiKeySource", apiKeySource, "claude_code_version", claudeVersion, "output_style", "default",
		"agents", []string{"general-purpose"}, "skills", []string{}, "plugins", []string{}, "uuid", uuid4(),
	})
	return model, secret
}

// claudeAnswer plays the turn once the model is reached: a first text, an
// ls of dir as a Bash tool call, then the final text (turn turnN, after
// prev) or, when the prompt asks, an API error. It returns the exit code.
func claudeAnswer(msg claudeMessages, store claudeStore, prompt, dir, prev string, turnN int) int {
	out, sessionID := msg.out, msg.session
	first := firstText(prompt)
	msg.assistant(obj{"type", "text", "text", first})
	toolID := "toolu_01" + randBase62(22)
	msg.assistant(obj{"type", "tool_use", "id", toolID, "name", "Bash",
		"input", obj{"command", "ls -1", "description", "List files in the working directory"}})
	listing, code := listDir(dir)
	out.emit(obj{
		"type", "user",
		"message", obj{"role", "user", "content", []obj{
			{"tool_use_id", toolID, "type", "tool_result", "content", strings.TrimRight(listing, "\n"), "is_error", code != 0}}},
		"parent_tool_use_id", nil, "session_id", sessionID, "uuid", uuid4(),
		"tool_use_result", obj{"stdout", strings.TrimRight(listing, "\n"), "stderr", "", "interrupted", false, "isImage", false},
	})

	if wantsFailure(prompt) {
		text := `API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error ([fail] requested)"}}`
		msg.assistantError("server_error", text)
		msg.result(true, text, len(prompt), 40)
		return 1
	}

	final := finalText(listing, turnN, prev)
	msg.assistant(obj{"type", "text", "text", final})
	_ = store.append(obj{"type", "assistant", "message", obj{"role", "assistant",
		"content", []obj{{"type", "text", "text", final}}},
		"sessionId", sessionID, "cwd", dir, "uuid", uuid4(), "timestamp", nowISO(), "version", claudeVersion})
	msg.result(false, final, len(prompt), len(final))
	return 0
}

type claudeMessages struct {
	out     *emitter
	session string
	model   string
}

func (m claudeMessages) assistant(block obj) {
	m.out.emit(obj{
		"type", "assistant",
		"message", obj{"model", m.model, "id", "msg_01" + randBase62(22), "type", "message",
			"role", "assistant", "content", []any{block}, "stop_reason", nil, "stop_sequence", nil,
			"usage", obj{"input_tokens", 4, "cache_creation_input_tokens", 0, "cache_read_input_tokens", 0, "output_tokens", 1}},
		"parent_tool_use_id", nil, "session_id", m.session, "uuid", uuid4(),
	})
}

// assistantError is the synthetic assistant message the CLI prints for an
// API or authentication error, with its error kind.
func (m claudeMessages) assistantError(kind, text string) {
	m.out.emit(obj{
		"type", "assistant",
		"message", obj{"id", uuid4(), "model", "<synthetic>", "role", "assistant", "stop_reason", "stop_sequence",
			"stop_sequence", "", "type", "message", "content", []any{obj{"type", "text", "text", text}},
			"usage", obj{"input_tokens", 0, "output_tokens", 0, "cache_creation_input_tokens", 0, "cache_read_input_tokens", 0}},
		"parent_tool_use_id", nil, "session_id", m.session, "uuid", uuid4(), "error", kind,
	})
}

func (m claudeMessages) result(isError bool, text string, in, outTokens int) {
	cost := float64(in*3+outTokens*15) / 1e6
	m.out.emit(obj{
		"type", "result", "subtype", "success", "is_error", isError, "duration_ms", 1234, "duration_api_ms", 1100,
		"num_turns", 2, "result", text, "session_id", m.session, "total_cost_usd", cost,
		"usage", obj{"input_tokens", in, "cache_creation_input_tokens", 0, "cache_read_input_tokens", 1024,
			"output_tokens", outTokens, "service_tier", "standard"},
		"modelUsage", obj{}, "permission_denials", []any{}, "uuid", uuid4(),
	})
}

// claudeMCP reads one --mcp-config value (a file or a JSON string) and
// reports each server as the init event does, {name, status}. The stand-in
// does not start servers: a stdio server whose command is on PATH counts as
// connected, another as failed, and a remote one as pending.
func claudeMCP(cfg string) []obj {
	path := cfg
	if strings.HasPrefix(strings.TrimSpace(cfg), "{") {
		f, err := os.CreateTemp("", "mcp-*.json")
		if err != nil {
			return nil
		}
		defer os.Remove(f.Name())
		_, _ = f.WriteString(cfg)
		f.Close()
		path = f.Name()
	}
	names, _ := mcpServerNames(path, "mcpServers")
	servers, _ := mcpServerEntries(path, "mcpServers")
	var out []obj
	for _, n := range names {
		status := "pending"
		if cmd, _ := servers[n]["command"].(string); cmd != "" {
			status = "failed"
			if _, err := exec.LookPath(cmd); err == nil {
				status = "connected"
			}
		}
		out = append(out, obj{"name", n, "status", status})
	}
	return out
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func claudeConfigDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(homeDir(), ".claude")
}

var nonAlnum = regexp.MustCompile(`[^a-zA-Z0-9]`)

// claudeStore is the transcript store: projects/<cwd slug>/<session>.jsonl.
type claudeStore struct {
	root, cwd string
	file      string
}

func (s claudeStore) path(id string) string {
	return filepath.Join(s.root, "projects", nonAlnum.ReplaceAllString(s.cwd, "-"), id+".jsonl")
}

// find looks for a session in this directory's project, then in any other
// (print mode resumes a session by id from anywhere).
func (s claudeStore) find(id string) (string, bool) {
	if _, err := os.Stat(s.path(id)); err == nil {
		return s.path(id), true
	}
	matches, _ := filepath.Glob(filepath.Join(s.root, "projects", "*", id+".jsonl"))
	if len(matches) > 0 {
		return matches[0], true
	}
	return "", false
}

// history returns the last prompt and the number of the turn to come.
func (s claudeStore) history() (prev string, next int) {
	lines, _ := readJSONL(s.file)
	n := 0
	for _, l := range lines {
		if str(l, "type") != "user" {
			continue
		}
		m, _ := l["message"].(map[string]any)
		if c, ok := m["content"].(string); ok {
			prev, n = c, n+1
		}
	}
	return prev, n + 1
}

func (s claudeStore) append(v any) error { return appendJSONL(s.file, v) }
