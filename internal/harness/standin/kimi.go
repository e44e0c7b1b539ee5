package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Kimi Code 2.1.0 prompt mode, kimi -p (see internal/harness/kimi.go for
// where each fact comes from).

const kimiVersion = "2.1.0"

var kimiFlags = flagSpec{
	"--session": true, "--continue": false, "-C": false, "--yolo": false, "--auto": false,
	"--model": true, "--prompt": true, "--output-format": true, "--skills-dir": true,
	"--agent": true, "--agent-file": true, "--add-dir": true, "--yes": false,
	"--auto-approve": false, "--plan": false, "--version": false, "--help": false,
}

// -r/--resume is a hidden option of its own, read where --session is not
// given; the stand-in folds it into --session.
var kimiAliases = map[string]string{
	"-S": "--session", "-r": "--session", "--resume": "--session", "-c": "--continue",
	"-y": "--yolo", "-m": "--model", "-p": "--prompt", "-V": "--version", "-h": "--help",
}

// kimiOptional: commander's "-S, --session [id]" takes a value only when
// the next argument does not start with "-".
var kimiOptional = map[string]bool{"--session": true}

// kimiValueHelp is how commander names an option in "argument missing".
var kimiValueHelp = map[string]string{
	"--model": "-m, --model <model>", "--prompt": "-p, --prompt <prompt>",
	"--output-format": "--output-format <format>", "--skills-dir": "--skills-dir <dir>",
	"--agent": "--agent <name>", "--agent-file": "--agent-file <path>", "--add-dir": "--add-dir <dir>",
}

const kimiHelp = `Usage: kimi [options] [command]

The Starting Point for Next-Gen Agents (paddock stand-in: only -p with
--output-format stream-json is supported)

Options:
  -V, --version                 output the version number
  -S, --session [id]            Resume a session. With ID: resume that session. Without ID:
                                interactively pick.
  -c, --continue                Continue the previous session for the working directory. (default:
                                false)
  -y, --yolo                    Start in Ask When Needed mode.
  --auto                        Start in Never Ask mode.
  -m, --model <model>           LLM model alias to use for this invocation. Defaults to
                                default_model in config.toml.
  -p, --prompt <prompt>         Run one prompt non-interactively and print the response.
  --output-format <format>      Output format for prompt mode. Defaults to text. (choices: "text",
                                "stream-json")
  --skills-dir <dir>            Load skills from this directory.
  --agent <name>                Agent profile to start the new session with.
  --agent-file <path>           Load an agent definition from a Markdown file.
  --add-dir <dir>               Add an additional workspace directory for this session.
  --plan                        Start in plan mode. (default: false)
  -h, --help                    Show help.
`

func kimiMain(args []string) int {
	p, err := parseArgs(args, kimiFlags, kimiAliases, kimiOptional)
	if err != nil {
		// commander: "error: …" on stderr, exit 1.
		switch e := err.(type) {
		case errUnknownFlag:
			fmt.Fprintf(os.Stderr, "error: unknown option '%s'\n", e.arg)
		case errMissingValue:
			name := e.arg
			if c, ok := kimiAliases[name]; ok {
				name = c
			}
			fmt.Fprintf(os.Stderr, "error: option '%s' argument missing\n", kimiValueHelp[name])
		}
		return 1
	}
	switch {
	case p.has("--version"):
		fmt.Println(kimiVersion + versionSuffix)
		return 0
	case p.has("--help"):
		fmt.Print(kimiHelp)
		return 0
	case len(p.pos) > 0:
		fmt.Fprintf(os.Stderr, "unknown command '%s'. See 'kimi --help'.\n", p.pos[0])
		return 1
	}
	format := p.value("--output-format")
	if p.has("--output-format") && format != "text" && format != "stream-json" {
		fmt.Fprintf(os.Stderr, "error: option '--output-format <format>' argument '%s' is invalid. Allowed choices are text, stream-json.\n", format)
		return 1
	}
	if msg := kimiValidate(p); msg != "" {
		fmt.Fprintf(os.Stderr, "error: %s\n", msg)
		return 1
	}
	if !p.has("--prompt") {
		return fatalf("kimi stand-in: only prompt mode (-p) is supported")
	}
	if format == "" {
		format = strings.TrimSpace(os.Getenv("KIMI_MODEL_OUTPUT_FORMAT"))
	}
	switch format {
	case "stream-json":
	case "", "text":
		return fatalf("kimi stand-in: only --output-format stream-json is supported")
	default:
		fmt.Fprintf(os.Stderr, "error: Invalid KIMI_MODEL_OUTPUT_FORMAT value \"%s\". Expected one of: text, stream-json.\n", format)
		return 1
	}
	return kimiPrompt(p)
}

// kimiValidate is src/cli/options.ts validateOptions, for the options the
// stand-in knows.
func kimiValidate(p *parsed) string {
	prompt := p.has("--prompt")
	yolo := p.has("--yolo") || p.has("--yes") || p.has("--auto-approve")
	switch {
	case prompt && strings.TrimSpace(p.value("--prompt")) == "":
		return "Prompt cannot be empty."
	case p.has("--model") && strings.TrimSpace(p.value("--model")) == "":
		return "Model cannot be empty."
	case !prompt && p.has("--output-format"):
		return "Output format is only supported in prompt mode."
	case prompt && yolo:
		return "Cannot combine --prompt with --yolo."
	case prompt && p.has("--auto"):
		return "Cannot combine --prompt with --auto."
	case prompt && p.has("--plan"):
		return "Cannot combine --prompt with --plan."
	case (p.has("--agent") || p.has("--agent-file")) && (p.has("--session") || p.has("--continue")):
		return "Cannot combine --agent/--agent-file with --session/--continue: the agent is bound at session creation and the bound agent is restored automatically on resume."
	case prompt && p.has("--session") && p.value("--session") == "":
		return "Cannot use --session without an id in prompt mode."
	case p.has("--continue") && p.has("--session"):
		return "Cannot combine --continue, --session."
	case yolo && p.has("--auto"):
		return "Cannot combine --yolo with --auto."
	}
	return ""
}

func kimiPrompt(p *parsed) int {
	out := newEmitter()
	out.emit(obj{"role", "meta", "type", "system.version", "version", kimiVersion})
	home := kimiHome()
	fail := func(msg string) int {
		fmt.Fprintf(os.Stderr, "error: failed to run prompt: %s\nSee log: %s\n", msg, filepath.Join(home, "logs", "kimi-code.log"))
		return 1
	}
	workDir := cwd()
	mcp := kimiMCPServers(home, workDir)
	prompt := p.value("--prompt")

	store := kimiStore{home: home}
	id, dir := p.value("--session"), ""
	prev, turnN := "", 1
	if id != "" {
		var sessionCwd string
		var ok bool
		if dir, sessionCwd, ok = store.lookup(id); !ok {
			return fail(`Session "` + id + `" not found.`)
		}
		if sessionCwd != workDir {
			fmt.Fprintf(os.Stderr, "Session \"%s\" was created under a different directory.\n  cd \"%s\" && kimi -r %s\n\n", id, sessionCwd, id)
			return fail(`Session "` + id + `" was created under a different directory.`)
		}
		prev, turnN = store.history(dir)
	}
	if m := p.value("--model"); m != "" {
		// The stand-in reads no config.toml, so it has no model aliases.
		return fail(`Model "` + m + `" is not configured in config.toml.`)
	}
	if strings.TrimSpace(os.Getenv("KIMI_MODEL_NAME")) == "" {
		return fail("No model configured. Run `kimi` and use /login to sign in, then retry; or set default_model in config.toml.")
	}
	if id == "" {
		id = "session_" + uuid4()
		var err error
		if dir, err = store.create(id, workDir); err != nil {
			return fail(err.Error())
		}
	}
	if strings.TrimSpace(os.Getenv("KIMI_MODEL_API_KEY")) == "" {
		return fail("provider __kimi_env__ has no credential configured")
	}

	if err := (modelReach{host: "api.kimi.com"}).reach(prompt); err != nil {
		return fail(err.Error())
	}
	store.record(dir, obj{"type", "turn.prompt", "agentId", "main",
		"input", []obj{{"type", "text", "text", prompt}}, "origin", obj{"kind", "user"},
		"turnId", turnN - 1, "time", time.Now().UnixMilli()})
	callID := "call_" + randBase62(24)
	out.emit(obj{"role", "assistant", "content", firstText(prompt) + "\n" + mcpLine(mcp),
		"tool_calls", []obj{{"type", "function", "id", callID,
			"function", obj{"name", "Bash", "arguments", rawJSON(obj{"command", "ls -1"})}}}})
	listing, code := listDir(workDir)
	// Tool progress (the command's output) goes to stderr as it runs.
	fmt.Fprint(os.Stderr, listing)
	result := listing
	if code != 0 {
		result += fmt.Sprintf("Command failed with exit code: %d.", code)
	}
	out.emit(obj{"role", "tool", "tool_call_id", callID, "content", result})

	if wantsFailure(prompt) {
		return fail("provider.api_error: 400 Invalid request: [fail] requested")
	}
	final := finalText(listing, turnN, prev)
	out.emit(obj{"role", "assistant", "content", final})
	store.record(dir, obj{"type", "context.append_message", "agentId", "main",
		"message", obj{"role", "assistant", "content", []obj{{"type", "text", "text", final}}, "toolCalls", []any{}},
		"time", time.Now().UnixMilli()})
	out.emit(obj{"role", "meta", "type", "session.resume_hint", "session_id", id,
		"command", "kimi -r " + id, "content", "To resume this session: kimi -r " + id})
	return 0
}

// kimiHome is KIMI_CODE_HOME, else ~/.kimi-code.
func kimiHome() string {
	if d := os.Getenv("KIMI_CODE_HOME"); d != "" {
		return d
	}
	return filepath.Join(homeDir(), ".kimi-code")
}

// kimiMCPServers are the servers of $KIMI_CODE_HOME/mcp.json. The
// project-level files (<git root>/.mcp.json, <cwd>/.kimi-code/mcp.json) are
// read only in a folder trusted interactively, which a stand-in's never is:
// their servers are skipped with the CLI's warning.
func kimiMCPServers(home, workDir string) []string {
	user := filepath.Join(home, "mcp.json")
	names, _ := mcpServerNames(user, "mcpServers")
	root := workDir
	for d := workDir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	var skipped []string
	for _, f := range []string{filepath.Join(root, ".mcp.json"), filepath.Join(workDir, ".kimi-code", "mcp.json")} {
		if f == user {
			continue
		}
		for name, e := range kimiEntries(f) {
			target := "stdio: " + str(e, "command")
			if u := str(e, "url"); u != "" {
				target = "http: " + u
			}
			skipped = append(skipped, name+" ("+target+")")
		}
	}
	if len(skipped) > 0 {
		noun := "servers"
		if len(skipped) == 1 {
			noun = "server"
		}
		fmt.Fprintf(os.Stderr, "Warning: this folder is not trusted; skipped %d project-level MCP %s: %s.\n  Run `kimi` here and choose \"Trust this folder\" to enable them.\n\n",
			len(skipped), noun, strings.Join(union(skipped), ", "))
	}
	return names
}

func kimiEntries(path string) map[string]map[string]any {
	entries, _ := mcpServerEntries(path, "mcpServers")
	return entries
}

// kimiStore keeps sessions as the CLI does:
// sessions/wd_<slug>_<hash>/session_<uuid>/ with state.json and
// agents/main/wire.jsonl, and session_index.jsonl naming each session's
// directory and working directory.
type kimiStore struct{ home string }

func (s kimiStore) index() string { return filepath.Join(s.home, "session_index.jsonl") }

// lookup finds a session in the index.
func (s kimiStore) lookup(id string) (dir, workDir string, ok bool) {
	lines, _ := readJSONL(s.index())
	for _, l := range lines {
		if str(l, "sessionId") == id {
			return str(l, "sessionDir"), str(l, "workDir"), true
		}
	}
	return "", "", false
}

func (s kimiStore) create(id, workDir string) (string, error) {
	dir := filepath.Join(s.home, "sessions", kimiWorkDirKey(workDir), id)
	now := time.Now().UnixMilli()
	state := obj{"id", id, "version", 2, "cwd", workDir, "createdAt", now, "updatedAt", now, "archived", false,
		"agents", obj{"main", obj{"homedir", filepath.Join(dir, "agents", "main"), "type", "main"}},
		"custom", obj{}, "isCustomTitle", false}
	if err := writeJSON(filepath.Join(dir, "state.json"), state); err != nil {
		return "", err
	}
	if err := appendJSONL(s.wire(dir), obj{"type", "metadata", "protocol_version", "1.5", "created_at", now}); err != nil {
		return "", err
	}
	return dir, appendJSONL(s.index(), obj{"sessionId", id, "sessionDir", dir, "workDir", workDir})
}

func (s kimiStore) wire(dir string) string { return filepath.Join(dir, "agents", "main", "wire.jsonl") }

func (s kimiStore) record(dir string, v any) { _ = appendJSONL(s.wire(dir), v) }

// history returns the last prompt of a session and the number of its next
// turn.
func (s kimiStore) history(dir string) (prev string, next int) {
	lines, _ := readJSONL(s.wire(dir))
	n := 0
	for _, l := range lines {
		if str(l, "type") != "turn.prompt" {
			continue
		}
		n++
		input, _ := l["input"].([]any)
		for _, part := range input {
			if m, ok := part.(map[string]any); ok && str(m, "type") == "text" {
				prev = str(m, "text")
			}
		}
	}
	return prev, n + 1
}

var kimiSlugRE = regexp.MustCompile(`[^a-z0-9._-]+`)

// kimiWorkDirKey is agent-core-v2's encodeWorkDirKey: "wd_", a slug of the
// directory's name (at most 40 characters), "_", and the first 12 hex
// digits of the SHA-256 of the path.
func kimiWorkDirKey(workDir string) string {
	norm := strings.TrimRight(strings.ReplaceAll(workDir, `\`, "/"), "/")
	base := norm[strings.LastIndex(norm, "/")+1:]
	slug := strings.Trim(kimiSlugRE.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if len(slug) > 40 {
		slug = strings.Trim(slug[:40], "-")
	}
	if slug == "" || slug == "." || slug == ".." {
		slug = "workspace"
	}
	sum := sha256.Sum256([]byte(norm))
	return "wd_" + slug + "_" + hex.EncodeToString(sum[:])[:12]
}
