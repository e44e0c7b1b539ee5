package harness

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Kimi Code (@moonshot-ai/kimi-code on npm, the TypeScript successor of the
// Python kimi-cli), followed from version 2.1.0 as installed in
// paddock/all-harness:bookworm: its bundle dist/main.mjs (sources named by
// the bundle's //#region comments), its --help, and runs of that binary in a
// container without network against a local OpenAI-compatible stand-in
// provider. Facts and where they come from:
//
//   - src/cli/commands.ts (commander): -p/--prompt <prompt> runs one prompt
//     non-interactively; --output-format text|stream-json; -S/--session [id]
//     resumes (hidden alias -r/--resume); -m/--model <alias> names a model
//     alias of config.toml; -V/--version prints "2.1.0". There is no
//     work-dir flag (the session's directory is the process's cwd) and no
//     MCP flag. An unknown option prints "error: unknown option '--x'" and
//     exits 1. A required option value is taken even when it starts with
//     "-"; Command still passes the prompt as --prompt=<text>.
//   - src/cli/options.ts: -p cannot be combined with --yolo, --auto or
//     --plan ("error: Cannot combine --prompt with --yolo.", exit 1), nor
//     with --session without an id. src/cli/v2/run-v2-print.ts
//     (resolveNativeSession) puts a print-mode session's agent in the "auto"
//     permission mode, new or resumed, so tools run without asking.
//   - run-v2-print.ts: `-S <id>` for an id the session index does not know
//     fails: `Session "<id>" not found.`; a session made in another directory
//     fails too. Without -S a new session is made, id "session_<uuid v4>".
//   - src/cli/prompt-render.ts (PromptJsonWriter, writeResumeHint,
//     writeExperimentalVersion): stream-json is one JSON object per line:
//     {"role":"meta","type":"system.version","version"} first;
//     {"role":"assistant","content"?: string,"tool_calls"?: [{"type":
//     "function","id","function":{"name","arguments": JSON text}}]};
//     {"role":"tool","tool_call_id","content": string} (the tool's output,
//     with no error flag: the isError of the session's wire.jsonl is not
//     printed); {"role":"meta","type":"turn.step.retrying",…} before a retry;
//     and, last and only after a completed turn, {"role":"meta","type":
//     "session.resume_hint","session_id","command","content"}. Thinking is
//     not printed, and there is no usage line.
//   - src/main.ts: a failure prints "error: failed to run prompt: <message>"
//     and "See log: <path>" on stderr and exits 1, with no resume hint, so a
//     failed turn reports no session id. A turn failure's message is
//     "<code>: <text>" (formatNativeTurnFailure), e.g.
//     "provider.auth_error: 401 Invalid Authentication". Tool progress (a
//     shell command's output) is copied to stderr as it runs.
//   - packages/agent-core-v2/src/app/kosongConfig envOverlay.ts and
//     configSection.ts (kimiModelEnvOverlay, providersEnvBindings), and
//     runs: KIMI_MODEL_NAME makes an env model the default; its provider
//     takes the key from KIMI_MODEL_API_KEY only (without it: "provider __kimi_env__ has no
//     credential configured"; KIMI_API_KEY is not read for it, checked by
//     running it), its type from KIMI_MODEL_PROVIDER_TYPE (default "kimi")
//     and its base URL from KIMI_MODEL_BASE_URL, else KIMI_BASE_URL, else
//     https://api.moonshot.ai/v1. With neither KIMI_MODEL_NAME nor a config:
//     "No model configured. Run `kimi` and use /login …". --model only names
//     config.toml aliases ("Model \"x\" is not configured in config.toml."),
//     so Command names the model in KIMI_MODEL_NAME. Command's defaults, for
//     the runtime's environment to override: the Kimi Code platform,
//     https://api.kimi.com/coding/v1 (packages/oauth managed-usage.ts,
//     DEFAULT_KIMI_CODE_BASE_URL), in KIMI_BASE_URL so that a runtime's
//     KIMI_MODEL_BASE_URL or provider type still wins; and the model
//     "kimi-for-coding", one of the two Kimi Code model ids the bundle names
//     (packages/acp-server/src/model-catalog.ts, TOGGLEABLE_THINKING_MODELS),
//     not confirmed as the platform's default.
//   - src/cli/update/preflight.ts (isAutoUpdateDisabledByEnv): print mode
//     checks for and installs updates in the background unless
//     KIMI_CODE_NO_AUTO_UPDATE (or KIMI_CLI_NO_AUTO_UPDATE) is true;
//     DISABLE_AUTOUPDATER is not read. Command sets it, so the CLI stays the
//     version this file follows.
//   - agent-core-v2 src/app/mcpConfig/configLoader.ts and
//     src/workspace/workspaceTrust/trustRecord.ts, and runs: MCP servers
//     come only from files: $KIMI_CODE_HOME/mcp.json (default
//     ~/.kimi-code/mcp.json), always; <git root or cwd>/.mcp.json and
//     <cwd>/.kimi-code/mcp.json only in a folder trusted interactively. The
//     format is CapRoot/mcp.json's ({"mcpServers": {name: {command, args,
//     env} | {url}}}), and a stdio server's tools are named
//     mcp__<server>__<tool>. No flag or variable names another file, and
//     moving KIMI_CODE_HOME moves the sessions too, so Command does not wire
//     CapRoot/mcp.json: the servers reach kimi when ~/.kimi-code/mcp.json
//     holds them (in a sandbox HOME is the workspace, so that is also the
//     project file).
//   - Sessions live in $KIMI_CODE_HOME/sessions/wd_<slug of the cwd's
//     name>_<first 12 hex of sha256(cwd)>/session_<uuid>/ (state.json,
//     agents/main/wire.jsonl), indexed in $KIMI_CODE_HOME/session_index.jsonl
//     (agent-core-v2 src/_base/utils/workdir-slug.ts, seen on disk).
var kimi = &Harness{
	Name:    "kimi",
	Binary:  "kimi",
	Secrets: []string{"KIMI_MODEL_API_KEY"},
	Endpoints: []Endpoint{
		{Secret: "KIMI_MODEL_API_KEY", Host: "api.kimi.com", BaseURLs: []string{"KIMI_MODEL_BASE_URL", "KIMI_BASE_URL"}},
	},
	WrittenAgainst: "2.1.0",
	Package:        "@moonshot-ai/kimi-code",
	Description:    "Moonshot AI's Kimi Code CLI in prompt mode with stream-json output",
	command:        kimiCommand,
	newParser:      func(h *Harness) Parser { return &kimiParser{turn: turn{h: h}} },
}

// Defaults for a sandbox without ~/.kimi-code/config.toml.
const (
	kimiDefaultBaseURL = "https://api.kimi.com/coding/v1"
	kimiDefaultModel   = "kimi-for-coding"
)

func kimiCommand(inv Invocation) ([]string, map[string]string) {
	argv := []string{"kimi", "--output-format", "stream-json"}
	if inv.ResumeID != "" {
		argv = append(argv, "--session", inv.ResumeID)
	}
	argv = append(argv, "--prompt="+inv.Prompt)
	model := kimiDefaultModel
	if inv.Model != "" {
		model = inv.Model
	}
	env := map[string]string{
		"KIMI_MODEL_NAME":          model,
		"KIMI_BASE_URL":            kimiDefaultBaseURL,
		"KIMI_CODE_NO_AUTO_UPDATE": "1",
		// A sandbox reaches only the hosts its runtime allows; usage
		// reports to the vendor are not one of them.
		"KIMI_DISABLE_TELEMETRY": "1",
	}
	return argv, env
}

type kimiParser struct {
	turn
}

type kimiLine struct {
	Role       string `json:"role"`
	Type       string `json:"type"`
	SessionID  string `json:"session_id"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments any    `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func (p *kimiParser) Feed(line []byte) []Event {
	var l kimiLine
	if !p.decode(line, &l) {
		return nil
	}
	var out []Event
	switch l.Role {
	case "assistant":
		text, _ := l.Content.(string)
		out = append(out, p.message(text)...)
		for _, c := range l.ToolCalls {
			var input json.RawMessage
			if args, ok := c.Function.Arguments.(string); ok {
				input = json.RawMessage(args)
			}
			out = append(out, toolCall(c.ID, c.Function.Name, input))
		}
	case "tool":
		output, _ := l.Content.(string)
		out = append(out, toolResult(l.ToolCallID, output, false))
	case "meta":
		if l.Type == "session.resume_hint" && l.SessionID != "" {
			p.sessionID = l.SessionID
		}
	}
	// system.version, turn.step.retrying and goal.summary lines say nothing
	// the session events carry.
	return out
}

// kimiErrorRE finds the failure line main.ts prints; kimiCodeRE the
// "<code>: " a turn failure's message starts with.
var (
	kimiErrorRE = regexp.MustCompile(`(?m)^error: (?:failed to run prompt: )?(.+)$`)
	kimiCodeRE  = regexp.MustCompile(`^([a-z_]+(?:\.[a-z_]+)+): `)
)

func (p *kimiParser) Finish(exitCode int, stderrTail string) []Event {
	if exitCode != 0 && !p.errored {
		// stderr also carries tool progress; the error line is the account.
		if m := kimiErrorRE.FindAllStringSubmatch(stderrTail, -1); len(m) > 0 {
			msg := strings.TrimSpace(m[len(m)-1][1])
			code := ""
			if c := kimiCodeRE.FindStringSubmatch(msg); c != nil {
				code = c[1]
			}
			out := p.fail(code, msg)
			return append(out, p.finish(exitCode, "")...)
		}
	}
	return p.finish(exitCode, stderrTail)
}
