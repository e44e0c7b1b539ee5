package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Gemini CLI headless mode (see internal/harness/gemini.go).

const geminiVersion = "0.61.0"

var geminiFlags = flagSpec{
	"--prompt": true, "--prompt-interactive": true, "--model": true, "--output-format": true,
	"--approval-mode": true, "--yolo": false, "--resume": true, "--session-id": true,
	"--session-file": true, "--list-sessions": false, "--debug": false, "--sandbox": false,
	"--skip-trust": false, "--include-directories": true, "--allowed-mcp-server-names": true,
	"--allowed-tools": true, "--extensions": true, "--raw-output": false,
	"--accept-raw-output-risk": false, "--screen-reader": false, "--version": false, "--help": false,
}

var geminiAliases = map[string]string{
	"-p": "--prompt", "-i": "--prompt-interactive", "-m": "--model", "-o": "--output-format",
	"-y": "--yolo", "-r": "--resume", "-d": "--debug", "-s": "--sandbox", "-e": "--extensions",
	"-v": "--version", "-h": "--help",
}

const geminiHelp = `Usage: gemini [options] [command]

Gemini CLI - Defaults to interactive mode. Use -p/--prompt for non-interactive (headless) mode.

Options:
  -m, --model            Model                                              [string]
  -p, --prompt           Run in non-interactive (headless) mode with the given prompt.
  -y, --yolo             Automatically accept all actions                  [boolean]
      --approval-mode    Set the approval mode
                            [string] [choices: "default", "auto_edit", "yolo", "plan"]
  -r, --resume           Resume a previous session. Use "latest" for most recent or index number (e.g. --resume 5)
  -o, --output-format    The format of the CLI output.
                                     [string] [choices: "text", "json", "stream-json"]
  -v, --version          Show version number                               [boolean]
  -h, --help             Show help                                         [boolean]
`

func geminiMain(args []string) int {
	p, err := parseArgs(args, geminiFlags, geminiAliases, map[string]bool{"--resume": true})
	if err != nil {
		return geminiUsageError(err)
	}
	if code, done := geminiCheckHeadless(p); done {
		return code
	}
	prompt := geminiPrompt(p)

	dir := cwd()
	store := newGeminiStore(dir)
	sessionID, prev, turnN := uuid4(), "", 1
	if p.has("--resume") {
		id := p.value("--resume")
		file, err := store.find(id)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Error resuming session: %v\n", err)
			return 42
		}
		store.file = file
		sessionID, prev, turnN = store.history()
	}

	// 0.61.0 says so on stderr before it checks credentials.
	if p.has("--yolo") || p.value("--approval-mode") == "yolo" {
		fmt.Fprintln(os.Stderr, "YOLO mode is enabled. All tool calls will be automatically approved.")
	}
	// validateNonInteractiveAuth: stderr only, exit 41.
	if os.Getenv("GEMINI_API_KEY") == "" && os.Getenv("GOOGLE_GENAI_USE_VERTEXAI") != "true" && os.Getenv("GOOGLE_GENAI_USE_GCA") != "true" {
		fmt.Fprintf(os.Stderr, "Please set an Auth method in your %s or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA\n",
			filepath.Join(geminiDir(), "settings.json"))
		return 41
	}
	if store.file == "" {
		if err := store.create(sessionID); err != nil {
			return fatalf("Error initializing chat recording service: %v", err)
		}
	}
	model := p.value("--model")
	if model == "" {
		model = "gemini-2.5-pro"
	}
	mcp := geminiMCPNames(dir)

	out := newEmitter()
	ts := nowISO
	out.emit(obj{"type", "init", "timestamp", ts(), "session_id", sessionID, "model", model})
	out.emit(obj{"type", "message", "timestamp", ts(), "role", "user", "content", prompt})
	_ = store.record(obj{"id", uuid4(), "timestamp", ts(), "type", "user", "content", []obj{{"text", prompt}}})
	if err := (modelReach{host: "generativelanguage.googleapis.com"}).reach(prompt); err != nil {
		return fatalf("%v", err)
	}

	return geminiAnswer(out, store, prompt, dir, model, mcp, prev, turnN)
}

// geminiUsageError reports a flag parseArgs refused as yargs strict mode
// does: the message, then the help, exit code 1.
func geminiUsageError(err error) int {
	switch e := err.(type) {
	case errUnknownFlag:
		fmt.Fprintf(os.Stderr, "Unknown argument: %s\n", strings.TrimLeft(strings.SplitN(e.arg, "=", 2)[0], "-"))
	case errMissingValue:
		fmt.Fprintf(os.Stderr, "Not enough arguments following: %s\n", strings.TrimLeft(e.arg, "-"))
	}
	fmt.Fprint(os.Stderr, geminiHelp)
	return 1
}

// geminiPrompt is the prompt of p: --prompt, or else the positionals.
func geminiPrompt(p *parsed) string {
	if prompt := p.value("--prompt"); prompt != "" {
		return prompt
	}
	return strings.Join(p.pos, " ")
}

// geminiCheckHeadless answers --version and --help, and refuses what
// gemini refuses (a bad --output-format, --yolo with --approval-mode, a
// prompt given twice) and what the stand-in does not run: anything but a
// headless prompt with stream-json. done says it answered, with exit code
// code.
func geminiCheckHeadless(p *parsed) (code int, done bool) {
	switch {
	case p.has("--version"):
		fmt.Println(geminiVersion + versionSuffix)
		return 0, true
	case p.has("--help"):
		fmt.Print(geminiHelp)
		return 0, true
	}
	usageErr := func(msg string) int {
		fmt.Fprintln(os.Stderr, msg)
		fmt.Fprint(os.Stderr, geminiHelp)
		return 1
	}
	if f := p.value("--output-format"); f != "" && f != "text" && f != "json" && f != "stream-json" {
		return usageErr(fmt.Sprintf("Invalid values:\n  Argument: output-format, Given: %q, Choices: \"text\", \"json\", \"stream-json\"", f)), true
	}
	if p.has("--yolo") && p.has("--approval-mode") {
		return usageErr("Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead."), true
	}
	if p.has("--prompt") && len(p.pos) > 0 {
		return usageErr("Cannot use both a positional prompt and the --prompt (-p) flag together"), true
	}
	if geminiPrompt(p) == "" {
		return fatalf("gemini stand-in: only headless mode (-p) is supported"), true
	}
	if p.value("--output-format") != "stream-json" {
		return fatalf("gemini stand-in: only --output-format stream-json is supported"), true
	}
	return 0, false
}

// geminiAnswer plays the turn once the model is reached: a first text,
// naming the MCP servers mcp, in two delta chunks, an ls of dir as a shell
// tool, then the final text (turn turnN, after prev) or, when the prompt
// asks, an error result. It returns the exit code.
func geminiAnswer(out *emitter, store *geminiStore, prompt, dir, model string, mcp []string, prev string, turnN int) int {
	ts := nowISO
	// Assistant text arrives in delta chunks.
	first := firstText(prompt) + "\n" + mcpLine(mcp)
	half := len(first) / 2
	out.emit(obj{"type", "message", "timestamp", ts(), "role", "assistant", "content", first[:half], "delta", true})
	out.emit(obj{"type", "message", "timestamp", ts(), "role", "assistant", "content", first[half:], "delta", true})
	toolID := "run_shell_command-" + strconv.FormatInt(time.Now().UnixMilli(), 10) + "-" + randHex(12)
	out.emit(obj{"type", "tool_use", "timestamp", ts(), "tool_name", "run_shell_command", "tool_id", toolID,
		"parameters", obj{"command", "ls -1", "description", "List the files in the working directory."}})
	listing, code := listDir(dir)
	status := "success"
	if code != 0 {
		status = "error"
	}
	out.emit(obj{"type", "tool_result", "timestamp", ts(), "tool_id", toolID, "status", status, "output", listing})

	stats := func(out int) obj {
		in := 3000 + len(prompt)
		return obj{"total_tokens", in + out, "input_tokens", in, "output_tokens", out, "cached", 1024,
			"input", in - 1024, "duration_ms", 1500, "tool_calls", 1,
			"models", obj{model, obj{"total_tokens", in + out, "input_tokens", in, "output_tokens", out, "cached", 1024, "input", in - 1024}}}
	}
	if wantsFailure(prompt) {
		out.emit(obj{"type", "result", "timestamp", ts(), "status", "error",
			"error", obj{"type", "Error", "message", "[API Error: An internal error has occurred. ([fail] requested)]"},
			"stats", stats(20)})
		return 1
	}
	final := finalText(listing, turnN, prev)
	out.emit(obj{"type", "message", "timestamp", ts(), "role", "assistant", "content", final, "delta", true})
	_ = store.record(obj{"id", uuid4(), "timestamp", ts(), "type", "gemini", "content", final, "model", model})
	out.emit(obj{"type", "result", "timestamp", ts(), "status", "success", "stats", stats(len(final))})
	return 0
}

func geminiDir() string { return filepath.Join(homeDir(), ".gemini") }

// geminiMCPNames merges the mcpServers of the user, project and system
// settings files (GEMINI_CLI_SYSTEM_SETTINGS_PATH moves the system one).
func geminiMCPNames(dir string) []string {
	system := os.Getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
	if system == "" {
		system = "/etc/gemini-cli/settings.json"
	}
	var lists [][]string
	for _, f := range []string{filepath.Join(geminiDir(), "settings.json"), filepath.Join(dir, ".gemini", "settings.json"), system} {
		names, _ := mcpServerNames(f, "mcpServers")
		lists = append(lists, names)
	}
	return union(lists...)
}

// geminiStore keeps sessions as the CLI does: a project slug registered in
// ~/.gemini/projects.json, and tmp/<slug>/chats/session-<time>-<id8>.jsonl.
type geminiStore struct {
	project string
	chats   string
	file    string
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func newGeminiStore(dir string) *geminiStore {
	s := &geminiStore{project: dir}
	registry := filepath.Join(geminiDir(), "projects.json")
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if data, err := os.ReadFile(registry); err == nil {
		_ = json.Unmarshal(data, &reg)
	}
	if reg.Projects == nil {
		reg.Projects = map[string]string{}
	}
	slug, ok := reg.Projects[dir]
	if !ok {
		base := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(filepath.Base(dir)), "-"), "-")
		if base == "" {
			base = "project"
		}
		taken := map[string]bool{}
		for _, v := range reg.Projects {
			taken[v] = true
		}
		slug = base
		for i := 1; taken[slug]; i++ {
			slug = fmt.Sprintf("%s-%d", base, i)
		}
		reg.Projects[dir] = slug
		_ = writeJSON(registry, reg)
		_ = os.MkdirAll(filepath.Join(geminiDir(), "tmp", slug), 0o700)
		_ = os.WriteFile(filepath.Join(geminiDir(), "tmp", slug, ".project_root"), []byte(dir), 0o600)
	}
	s.chats = filepath.Join(geminiDir(), "tmp", slug, "chats")
	return s
}

func (s *geminiStore) create(id string) error {
	now := time.Now().UTC()
	s.file = filepath.Join(s.chats, "session-"+strings.ReplaceAll(now.Format("2006-01-02T15:04"), ":", "-")+"-"+id[:8]+".jsonl")
	return appendJSONL(s.file, obj{"sessionId", id, "projectHash", randHex(64),
		"startTime", nowISO(), "lastUpdated", nowISO(), "kind", "main"})
}

func (s *geminiStore) record(msg obj) error { return appendJSONL(s.file, msg) }

type geminiSession struct {
	id, file string
	start    string
}

func (s *geminiStore) sessions() []geminiSession {
	files, _ := filepath.Glob(filepath.Join(s.chats, "session-*.jsonl"))
	var out []geminiSession
	for _, f := range files {
		lines, _ := readJSONL(f)
		if len(lines) == 0 || str(lines[0], "sessionId") == "" {
			continue
		}
		out = append(out, geminiSession{id: str(lines[0], "sessionId"), file: f, start: str(lines[0], "startTime")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// find resolves a --resume value: "latest" (or empty), a session UUID, or a
// 1-based index, with the CLI's error texts.
func (s *geminiStore) find(id string) (string, error) {
	sessions := s.sessions()
	if len(sessions) == 0 {
		return "", fmt.Errorf("No previous sessions found for this project.")
	}
	if id == "" || id == "latest" {
		return sessions[len(sessions)-1].file, nil
	}
	for _, se := range sessions {
		if se.id == id {
			return se.file, nil
		}
	}
	if n, err := strconv.Atoi(id); err == nil && n > 0 && n <= len(sessions) && strconv.Itoa(n) == id {
		return sessions[n-1].file, nil
	}
	return "", fmt.Errorf("Invalid session identifier %q.\n  Searched for sessions in %s.\n  Use --list-sessions to see available sessions, then use --resume {number}, --resume {uuid}, or --resume latest.", id, s.chats)
}

// history returns the session id, its last prompt and the next turn number.
func (s *geminiStore) history() (id, prev string, next int) {
	lines, _ := readJSONL(s.file)
	n := 0
	for i, l := range lines {
		if i == 0 {
			id = str(l, "sessionId")
			continue
		}
		if str(l, "type") != "user" {
			continue
		}
		content, _ := l["content"].([]any)
		for _, c := range content {
			if m, _ := c.(map[string]any); str(m, "text") != "" {
				prev, n = str(m, "text"), n+1
			}
		}
	}
	return id, prev, n + 1
}
