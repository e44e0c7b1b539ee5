package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// OpenCode `opencode run` (see internal/harness/opencode.go).

const openCodeVersion = "1.18.33"

var openCodeRunFlags = flagSpec{
	"--format": true, "--session": true, "--continue": false, "--fork": false, "--model": true,
	"--agent": true, "--dir": true, "--auto": false, "--yolo": false,
	"--dangerously-skip-permissions": false, "--file": true, "--title": true, "--share": false,
	"--attach": true, "--port": true, "--variant": true, "--thinking": false, "--command": true,
	"--print-logs": false, "--log-level": true, "--help": false, "--version": false,
}

var openCodeAliases = map[string]string{
	"-s": "--session", "-c": "--continue", "-m": "--model", "-f": "--file",
	"-h": "--help", "-v": "--version",
}

const openCodeHelp = `opencode run [message..]

run opencode with a message

Positionals:
  message  message to send                                     [array] [default: []]

Options:
  -h, --help        show help                                            [boolean]
  -v, --version     show version number                                  [boolean]
  -c, --continue    continue the last session                            [boolean]
  -s, --session     session id to continue                                [string]
  -m, --model       model to use in the format of provider/model          [string]
      --format      format: default (formatted) or json (raw JSON events)
                                  [string] [choices: "default", "json"] [default: "default"]
      --dir         directory to run in                                   [string]
      --auto        auto-approve permissions that are not explicitly denied
                    (dangerous!)                        [boolean] [default: false]
`

func openCodeMain(args []string) int {
	if code, done := openCodeNotRun(args); done {
		return code
	}
	p, err := parseArgs(args[1:], openCodeRunFlags, openCodeAliases, nil)
	if err != nil {
		return openCodeUsageError(err)
	}
	if code, done := openCodeCheckRun(p); done {
		return code
	}
	message := strings.Join(p.pos, " ")

	dir := cwd()
	store := openCodeStore{root: openCodeDataDir()}
	sessionID, prev, turnN := "", "", 1
	if id := p.value("--session"); id != "" {
		if !store.exists(id) {
			return openCodeUIError("Session not found")
		}
		sessionID = id
		prev, turnN = store.history(id)
	} else {
		sessionID = openCodeID("ses")
		title := message
		if len(title) > 50 {
			title = title[:50] + "..."
		}
		_ = writeJSON(store.sessionPath(sessionID), obj{"id", sessionID, "version", openCodeVersion,
			"projectID", "global", "directory", dir, "title", title,
			"time", obj{"created", time.Now().UnixMilli(), "updated", time.Now().UnixMilli()}})
	}
	mcp := openCodeMCPNames(dir)
	ev := openCodeEvents{out: newEmitter(), sessionID: sessionID}

	provider := anyEnv("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "OPENCODE_API_KEY")
	if _, err := os.Stat(filepath.Join(store.root, "auth.json")); provider == "" && err != nil {
		ev.ev("error", obj{"error", obj{"name", "ProviderAuthError", "data", obj{
			"providerID", "anthropic",
			"message", "No API key for any provider: set ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY or OPENCODE_API_KEY, or run `opencode auth login`"}}})
		return 1
	}
	// 1.18.33 gives up on a refused tunnel at once (APIError, not
	// retryable, with the proxy's answer; captured through a proxy that
	// refuses every CONNECT: testdata/opencode/captured-1.18.33-proxy-refused)
	// and retries anything else silently.
	reach := modelReach{host: openCodeModelHost(provider), giveUp: func(status int) bool { return status == http.StatusForbidden }}
	if err := reach.reach(message); err != nil {
		ev.reachError(provider, err)
		return 1
	}
	userMsg := openCodeID("msg")
	_ = store.message(sessionID, userMsg, obj{"id", userMsg, "sessionID", sessionID, "role", "user", "text", message})
	return openCodeAnswer(ev, store, message, dir, mcp, prev, turnN)
}

// openCodeNotRun answers --version and --help before a subcommand, and
// refuses any subcommand but run. done says it answered, with exit code
// code.
func openCodeNotRun(args []string) (code int, done bool) {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-v") {
		fmt.Println(openCodeVersion + versionSuffix)
		return 0, true
	}
	if len(args) == 0 || args[0] != "run" {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			fmt.Print("opencode [project]\n\nstart opencode tui (paddock stand-in: only `opencode run` is supported)\n\nCommands:\n  opencode run [message..]  run opencode with a message\n")
			return 0, true
		}
		return fatalf("opencode stand-in: only `opencode run` is supported"), true
	}
	return 0, false
}

// openCodeUsageError reports a flag parseArgs refused as yargs does: the
// help, then the error, exit code 1.
func openCodeUsageError(err error) int {
	switch e := err.(type) {
	case errUnknownFlag:
		fmt.Fprint(os.Stderr, openCodeHelp)
		fmt.Fprintf(os.Stderr, "\nUnknown argument: %s\n", strings.TrimLeft(strings.SplitN(e.arg, "=", 2)[0], "-"))
	case errMissingValue:
		fmt.Fprint(os.Stderr, openCodeHelp)
		fmt.Fprintf(os.Stderr, "\nNot enough arguments following: %s\n", strings.TrimLeft(e.arg, "-"))
	}
	return 1
}

// openCodeUIError prints msg as opencode's UI error and returns exit code 1.
func openCodeUIError(msg string) int {
	// In colour even when stderr is not a terminal (1.18.33).
	fmt.Fprintln(os.Stderr, "\x1b[91m\x1b[1mError: \x1b[0m"+msg)
	return 1
}

// openCodeCheckRun answers --help and --version, moves into --dir, and
// refuses a bad --format, an empty message and (here) output other than
// json. done says it answered, with exit code code.
func openCodeCheckRun(p *parsed) (code int, done bool) {
	switch {
	case p.has("--help"):
		fmt.Print(openCodeHelp)
		return 0, true
	case p.has("--version"):
		fmt.Println(openCodeVersion + versionSuffix)
		return 0, true
	}
	if f := p.value("--format"); f != "" && f != "default" && f != "json" {
		fmt.Fprint(os.Stderr, openCodeHelp)
		fmt.Fprintf(os.Stderr, "\nInvalid values:\n  Argument: format, Given: %q, Choices: \"default\", \"json\"\n", f)
		return 1, true
	}
	if d := p.value("--dir"); d != "" {
		if err := os.Chdir(d); err != nil {
			return openCodeUIError("Failed to change directory to " + d), true
		}
	}
	if strings.TrimSpace(strings.Join(p.pos, " ")) == "" {
		return openCodeUIError("You must provide a message or a command"), true
	}
	if p.value("--format") != "json" {
		return fatalf("opencode stand-in: only --format json is supported"), true
	}
	return 0, false
}

// openCodeEvents emits the JSON events of one session.
type openCodeEvents struct {
	out       *emitter
	sessionID string
}

func (e openCodeEvents) ev(typ string, fields obj) {
	e.out.emit(append(obj{"type", typ, "timestamp", time.Now().UnixMilli(), "sessionID", e.sessionID}, fields...))
}

func (e openCodeEvents) done() { e.ev("done", obj{"reason", "idle", "rejected", []string{}}) }

// reachError emits the error event for a model the key of provider could
// not reach: an APIError with the proxy's answer for a refused tunnel, an
// UnknownError otherwise.
func (e openCodeEvents) reachError(provider string, err error) {
	var ps errProxyStatus
	if !errors.As(err, &ps) {
		e.ev("error", obj{"error", obj{"name", "UnknownError", "data", obj{"message", err.Error()}}})
		return
	}
	headers := obj{}
	for _, k := range slices.Sorted(maps.Keys(ps.header)) {
		headers = append(headers, strings.ToLower(k), ps.header.Get(k))
	}
	data := obj{"message", http.StatusText(ps.code) + ": " + strings.TrimSpace(ps.body),
		"statusCode", ps.code, "isRetryable", false, "responseHeaders", headers, "responseBody", ps.body}
	if provider == "ANTHROPIC_API_KEY" {
		data = append(data, "metadata", obj{"url", "https://api.anthropic.com/v1/messages"})
	}
	e.ev("error", obj{"error", obj{"name", "APIError", "data", data}})
}

// openCodeAnswer plays the turn once the model is reached: a step with a
// first text naming the MCP servers mcp and an ls of dir as a bash tool,
// then a step with the final text (turn turnN, after prev) or, when the
// message asks, an API error. It returns the exit code.
func openCodeAnswer(ev openCodeEvents, store openCodeStore, message, dir string, mcp []string, prev string, turnN int) int {
	sessionID := ev.sessionID
	msgID := openCodeID("msg")
	part := func(typ string, fields obj) obj {
		return append(obj{"id", openCodeID("prt"), "sessionID", sessionID, "messageID", msgID, "type", typ}, fields...)
	}
	now := func() int64 { return time.Now().UnixMilli() }
	tokens := func(in, out int) obj {
		return obj{"input", in, "output", out, "reasoning", 0, "cache", obj{"read", 1024, "write", 0}}
	}

	ev.ev("step_start", obj{"part", part("step-start", obj{"snapshot", randHex(40)})})
	start := now()
	ev.ev("text", obj{"part", part("text", obj{"text", firstText(message) + "\n" + mcpLine(mcp),
		"time", obj{"start", start, "end", now()}})})
	listing, code := listDir(dir)
	state := obj{"status", "completed", "input", obj{"command", "ls -1", "description", "Lists files in the working directory"},
		"output", listing, "title", "ls -1", "metadata", obj{"output", listing, "exit", code, "description", "Lists files in the working directory"},
		"time", obj{"start", start, "end", now()}}
	ev.ev("tool_use", obj{"part", part("tool", obj{"callID", "toolu_01" + randBase62(22), "tool", "bash", "state", state})})
	ev.ev("step_finish", obj{"part", part("step-finish", obj{"reason", "tool-calls", "snapshot", randHex(40),
		"cost", 0.0021, "tokens", tokens(1800+len(message), 60)})})

	msgID = openCodeID("msg")
	ev.ev("step_start", obj{"part", part("step-start", obj{"snapshot", randHex(40)})})
	if wantsFailure(message) {
		ev.ev("error", obj{"error", obj{"name", "APIError", "data", obj{
			"message", "Internal server error ([fail] requested)", "statusCode", 500, "isRetryable", false}}})
		ev.done()
		return 1
	}
	final := finalText(listing, turnN, prev)
	ev.ev("text", obj{"part", part("text", obj{"text", final, "time", obj{"start", now(), "end", now()}})})
	ev.ev("step_finish", obj{"part", part("step-finish", obj{"reason", "stop", "snapshot", randHex(40),
		"cost", 0.0013, "tokens", tokens(1900, len(final))})})
	_ = store.message(sessionID, msgID, obj{"id", msgID, "sessionID", sessionID, "role", "assistant", "text", final})
	ev.done()
	return 0
}

func openCodeDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "opencode")
	}
	return filepath.Join(homeDir(), ".local", "share", "opencode")
}

// openCodeID is an ascending identifier: prefix_, 12 hex digits of time,
// 14 random base62 characters.
func openCodeID(prefix string) string {
	t := strconv.FormatInt(time.Now().UnixNano()/1000, 16)
	if len(t) < 12 {
		t = strings.Repeat("0", 12-len(t)) + t
	}
	return prefix + "_" + t[len(t)-12:] + randBase62(14)
}

// openCodeMCPNames merges the "mcp" objects of the global config, the file
// OPENCODE_CONFIG names, and the project's opencode.json (V2 nests servers
// under "mcp.servers"; both are read).
func openCodeMCPNames(dir string) []string {
	files := []string{filepath.Join(homeDir(), ".config", "opencode", "opencode.json")}
	if f := os.Getenv("OPENCODE_CONFIG"); f != "" {
		files = append(files, f)
	}
	files = append(files, filepath.Join(dir, "opencode.json"))
	var lists [][]string
	for _, f := range files {
		names, _ := mcpServerNames(f, "mcp")
		if entries, _ := mcpServerEntries(f, "mcp"); entries["servers"] != nil && entries["servers"]["type"] == nil {
			names, _ = mcpServerNames(f, "mcp", "servers")
		}
		lists = append(lists, names)
	}
	return union(lists...)
}

// openCodeStore keeps sessions in the JSON layout OpenCode used before its
// SQLite database (storage/session/<project>/<id>.json,
// storage/message/<session>/<id>.json) under the same data directory; the
// stand-in needs no SQLite.
type openCodeStore struct{ root string }

func (s openCodeStore) sessionPath(id string) string {
	return filepath.Join(s.root, "storage", "session", "global", id+".json")
}

func (s openCodeStore) exists(id string) bool {
	_, err := os.Stat(s.sessionPath(id))
	return err == nil
}

func (s openCodeStore) message(session, id string, v any) error {
	return writeJSON(filepath.Join(s.root, "storage", "message", session, id+".json"), v)
}

func (s openCodeStore) history(session string) (prev string, next int) {
	files, _ := filepath.Glob(filepath.Join(s.root, "storage", "message", session, "*.json"))
	sort.Strings(files) // ids ascend with time
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var m map[string]any
		if json.Unmarshal(data, &m) == nil && str(m, "role") == "user" {
			prev, n = str(m, "text"), n+1
		}
	}
	return prev, n + 1
}

// openCodeModelHost is where the provider whose key is set takes requests.
func openCodeModelHost(keyEnv string) string {
	switch keyEnv {
	case "OPENAI_API_KEY":
		return "api.openai.com"
	case "OPENROUTER_API_KEY":
		return "openrouter.ai"
	case "OPENCODE_API_KEY":
		return "opencode.ai"
	}
	return "api.anthropic.com"
}
