package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Codex CLI exec mode (see internal/harness/codex.go).

const codexVersion = "0.169.0"

var codexExecFlags = flagSpec{
	"--json": false, "--skip-git-repo-check": false, "--ephemeral": false,
	"--dangerously-bypass-approvals-and-sandbox": false, "--full-auto": false,
	"--model": true, "--cd": true, "--sandbox": true, "--config": true, "--profile": true,
	"--output-last-message": true, "--output-schema": true, "--color": true, "--image": true,
	"--add-dir": true, "--oss": false, "--ignore-user-config": false, "--ignore-rules": false,
	"--last": false, "--all": false, "--help": false, "--version": false,
}

var codexAliases = map[string]string{
	"-m": "--model", "-C": "--cd", "-s": "--sandbox", "-c": "--config", "-p": "--profile",
	"-o": "--output-last-message", "-i": "--image", "--experimental-json": "--json",
	"-h": "--help", "-V": "--version",
	"--yolo": "--dangerously-bypass-approvals-and-sandbox",
}

const codexUsage = `Usage: codex exec [OPTIONS] [PROMPT]
       codex exec [OPTIONS] <COMMAND> [ARGS]`

const codexHelp = `Run Codex non-interactively

` + codexUsage + `

Commands:
  resume  Resume a previous session by id or pick the most recent with --last
  help    Print this message or the help of the given subcommand(s)

Arguments:
  [PROMPT]  Initial instructions for the agent

Options:
  -c, --config <key=value>                     Override a configuration value
  -m, --model <MODEL>                          Model the agent should use
  -C, --cd <DIR>                               Tell the agent to use the specified directory as its working root
      --skip-git-repo-check                    Allow running Codex outside a Git repository
      --dangerously-bypass-approvals-and-sandbox
                                               Skip all confirmation prompts and execute commands without sandboxing
      --json                                   Print events to stdout as JSONL
  -h, --help                                   Print help
  -V, --version                                Print version
`

func codexMain(args []string) int {
	if code, done := codexNotExec(args); done {
		return code
	}
	p, err := parseArgs(args[1:], codexExecFlags, codexAliases, nil)
	if err != nil {
		return codexUsageError(err)
	}
	if p.has("--help") {
		fmt.Print(codexHelp)
		return 0
	}
	if p.has("--version") {
		fmt.Println("codex-cli " + codexVersion + versionSuffix)
		return 0
	}
	run, code, done := codexParseExec(args, p)
	if done {
		return code
	}
	prompt, dir := run.prompt, run.dir

	home := os.Getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(homeDir(), ".codex")
	}
	store := codexStore{home: home}
	threadID, prev, turnN := uuid7(), "", 1
	if run.resume {
		file, ok := store.find(run.resumeID)
		if !ok {
			return fatalf("Error: thread/resume: thread/resume failed: no rollout found for thread id %s (code -32600)", run.resumeID)
		}
		threadID, store.file = run.resumeID, file
		prev, turnN = store.history()
	} else {
		store.file = store.path(threadID)
		_ = appendJSONL(store.file, codexRollout("session_meta", obj{
			"id", threadID, "timestamp", nowISO(), "cwd", dir, "originator", "codex_exec",
			"cli_version", codexVersion, "source", "exec"}))
	}
	model := p.value("--model")
	if model == "" {
		model = "gpt-5.5-codex"
	}
	mcp := codexMCPNames(home, run.overrides)

	out := newEmitter()
	out.emit(obj{"type", "thread.started", "thread_id", threadID})
	out.emit(obj{"type", "turn.started"})

	_, noAuthFile := os.Stat(filepath.Join(home, "auth.json"))
	if anyEnv("CODEX_API_KEY", "CODEX_ACCESS_TOKEN") == "" && noAuthFile != nil {
		msg := "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header, url: https://api.openai.com/v1/responses (no CODEX_API_KEY or CODEX_ACCESS_TOKEN in the environment)"
		out.emit(obj{"type", "error", "message", msg})
		out.emit(obj{"type", "turn.failed", "error", obj{"message", msg}})
		return 1
	}
	if err := (modelReach{host: "api.openai.com"}).reach(prompt); err != nil {
		out.emit(obj{"type", "turn.failed", "error", obj{"message", "stream disconnected before completion: " + err.Error()}})
		return 1
	}
	_ = appendJSONL(store.file,
		codexRollout("turn_context", obj{"cwd", dir, "approval_policy", "never", "sandbox_policy", obj{"type", "danger-full-access"}, "model", model}),
		codexRollout("response_item", obj{"type", "message", "role", "user",
			"content", []obj{{"type", "input_text", "text", prompt}}}))
	return codexAnswer(out, store, prompt, dir, mcp, prev, turnN)
}

// codexNotExec answers --version and --help before a subcommand, and
// refuses any subcommand but exec. done says it answered, with exit code
// code.
func codexNotExec(args []string) (code int, done bool) {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-V") {
		fmt.Println("codex-cli " + codexVersion + versionSuffix)
		return 0, true
	}
	if len(args) == 0 || args[0] != "exec" {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			fmt.Print("Codex CLI (paddock stand-in: only `codex exec` is supported)\n\nUsage: codex [OPTIONS] [PROMPT]\n       codex [OPTIONS] <COMMAND> [ARGS]\n")
			return 0, true
		}
		return fatalf("codex stand-in: only `codex exec` is supported"), true
	}
	return 0, false
}

// codexUsageError reports a flag parseArgs refused as clap does: a usage
// error on stderr, exit code 2.
func codexUsageError(err error) int {
	switch e := err.(type) {
	case errUnknownFlag:
		fmt.Fprintf(os.Stderr, "error: unexpected argument '%s' found\n\n  tip: to pass '%s' as a value, use '-- %s'\n\n%s\n\nFor more information, try '--help'.\n",
			e.arg, e.arg, e.arg, codexUsage)
	case errMissingValue:
		fmt.Fprintf(os.Stderr, "error: a value is required for '%s <VALUE>' but none was supplied\n\nFor more information, try '--help'.\n", e.arg)
	}
	return 2
}

// codexExec is what a `codex exec` command line asks for.
type codexExec struct {
	resume    bool // resume a thread: resumeID's, or the last (--last)
	resumeID  string
	prompt    string
	dir       string // the working directory, after --cd
	overrides map[string]string
}

// codexParseExec reads the exec command line p (of args) into a codexExec,
// moving into --cd, and refuses what codex refuses: a resume without a
// thread, a bad -c override, an untrusted directory, no prompt, and (here)
// output other than --json. done says it refused, with exit code code.
func codexParseExec(args []string, p *parsed) (run codexExec, code int, done bool) {
	// The subcommand is the first positional, unless "--" came first; a
	// literal "resume" prompt after "--" stays a prompt.
	pos := p.pos
	if len(pos) > 0 && pos[0] == "resume" && !dashedBefore(args, "resume") {
		run.resume, pos = true, pos[1:]
		if !p.has("--last") {
			if len(pos) == 0 {
				return run, fatalf("Error: a session id or --last is required"), true
			}
			run.resumeID, pos = pos[0], pos[1:]
		}
	}
	run.prompt = strings.Join(pos, " ")

	run.overrides = map[string]string{}
	for _, kv := range p.flags["--config"] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return run, fatalf("Error parsing -c overrides: Invalid override (missing '='): %s", kv), true
		}
		run.overrides[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if p.has("--full-auto") {
		fmt.Fprintln(os.Stderr, "warning: `--full-auto` is deprecated; use `--sandbox workspace-write` instead.")
	}
	run.dir = cwd()
	if d := p.value("--cd"); d != "" {
		if err := os.Chdir(d); err != nil {
			return run, fatalf("Error: %v", err), true
		}
		run.dir = cwd()
	}
	bypass := p.has("--dangerously-bypass-approvals-and-sandbox")
	if !p.has("--skip-git-repo-check") && !bypass && !insideGit(run.dir) {
		return run, fatalf("Not inside a trusted directory and --skip-git-repo-check was not specified."), true
	}
	if run.prompt == "" {
		return run, fatalf("No prompt provided. Either specify one as an argument or pipe the prompt into stdin."), true
	}
	if !p.has("--json") {
		return run, fatalf("codex stand-in: only --json output is supported"), true
	}
	return run, 0, false
}

// codexAnswer plays the turn once the model is reached: a reasoning item,
// a first message naming the MCP servers mcp, an ls of dir as a command,
// then the final message (turn turnN, after prev) or, when the prompt
// asks, a failed turn. It returns the exit code.
func codexAnswer(out *emitter, store codexStore, prompt, dir string, mcp []string, prev string, turnN int) int {
	out.emit(obj{"type", "item.completed", "item", obj{"id", "item_0", "type", "reasoning", "text", "**Listing the working directory**"}})
	out.emit(obj{"type", "item.completed", "item", obj{"id", "item_1", "type", "agent_message",
		"text", firstText(prompt) + "\n" + mcpLine(mcp)}})
	command := "bash -lc 'ls -1'"
	out.emit(obj{"type", "item.started", "item", obj{"id", "item_2", "type", "command_execution",
		"command", command, "aggregated_output", "", "exit_code", nil, "status", "in_progress"}})
	listing, code := listDir(dir)
	status := "completed"
	if code != 0 {
		status = "failed"
	}
	out.emit(obj{"type", "item.completed", "item", obj{"id", "item_2", "type", "command_execution",
		"command", command, "aggregated_output", listing, "exit_code", code, "status", status}})

	if wantsFailure(prompt) {
		msg := "unexpected status 500 Internal Server Error: [fail] requested"
		out.emit(obj{"type", "error", "message", msg})
		out.emit(obj{"type", "turn.failed", "error", obj{"message", msg}})
		return 1
	}
	final := finalText(listing, turnN, prev)
	out.emit(obj{"type", "item.completed", "item", obj{"id", "item_3", "type", "agent_message", "text", final}})
	_ = appendJSONL(store.file, codexRollout("response_item", obj{"type", "message", "role", "assistant",
		"content", []obj{{"type", "output_text", "text", final}}}))
	out.emit(obj{"type", "turn.completed", "usage", obj{
		"input_tokens", 2400 + len(prompt), "cached_input_tokens", 1024, "output_tokens", len(final)}})
	return 0
}

// dashedBefore reports whether "--" comes before word in args.
func dashedBefore(args []string, word string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
		if a == word {
			return false
		}
	}
	return false
}

func insideGit(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

func codexRollout(typ string, payload any) obj {
	return obj{"timestamp", nowISO(), "type", typ, "payload", payload}
}

// codexMCPNames lists the MCP servers of $CODEX_HOME/config.toml and of
// the -c overrides: "mcp_servers={name = {…}, …}" (an inline table) or
// "mcp_servers.<name>.<field>=…" keys.
func codexMCPNames(home string, overrides map[string]string) []string {
	var names []string
	if data, err := os.ReadFile(filepath.Join(home, "config.toml")); err == nil {
		for _, m := range regexp.MustCompile(`(?m)^\s*\[mcp_servers\.("?)([^\]."]+)("?)[\].]`).FindAllStringSubmatch(string(data), -1) {
			names = append(names, m[2])
		}
	}
	for k, v := range overrides {
		switch {
		case k == "mcp_servers":
			names = append(names, tomlInlineKeys(v)...)
		case strings.HasPrefix(k, "mcp_servers."):
			name, _, _ := strings.Cut(strings.TrimPrefix(k, "mcp_servers."), ".")
			names = append(names, name)
		}
	}
	names = union(names)
	sort.Strings(names)
	return names
}

// tomlInlineKeys returns the top-level keys of a TOML inline table: enough
// of TOML for what paddock writes (bare or basic-string keys, nested inline
// tables, arrays and strings as values).
func tomlInlineKeys(s string) []string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return nil
	}
	var keys []string
	depth, expectKey := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			var b strings.Builder
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			if depth == 1 && expectKey {
				keys = append(keys, b.String())
				expectKey = false
			}
			i = j
		case c == '{' || c == '[':
			depth++
			if depth == 1 {
				expectKey = true
			}
		case c == '}' || c == ']':
			depth--
		case c == ',' && depth == 1:
			expectKey = true
		case c == '=' && depth == 1:
			expectKey = false
		case depth == 1 && expectKey && c != ' ' && c != '\t':
			j := i
			for j < len(s) && s[j] != '=' && s[j] != ' ' {
				j++
			}
			keys = append(keys, s[i:j])
			expectKey = false
			i = j - 1
		}
	}
	return keys
}

// codexStore is the rollout store: sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl.
type codexStore struct {
	home string
	file string
}

func (s codexStore) path(id string) string {
	now := time.Now()
	return filepath.Join(s.home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"),
		"rollout-"+now.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
}

func (s codexStore) find(id string) (string, bool) {
	matches, _ := filepath.Glob(filepath.Join(s.home, "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"))
	if len(matches) == 0 || id == "" {
		return "", false
	}
	return matches[0], true
}

func (s codexStore) history() (prev string, next int) {
	lines, _ := readJSONL(s.file)
	n := 0
	for _, l := range lines {
		payload, _ := l["payload"].(map[string]any)
		if str(l, "type") != "response_item" || str(payload, "role") != "user" {
			continue
		}
		content, _ := payload["content"].([]any)
		for _, c := range content {
			if m, _ := c.(map[string]any); str(m, "type") == "input_text" {
				prev, n = str(m, "text"), n+1
			}
		}
	}
	return prev, n + 1
}
