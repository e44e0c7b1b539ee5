package harness

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Gemini CLI, followed from google-gemini/gemini-cli at the
// 0.56.0-nightly.20260806 build (packages/cli/package.json at the source
// read), and checked against the pinned 0.61.0 on the paths that need no
// model (testdata/gemini/captured-0.61.0-*: with --approval-mode yolo it
// first says "YOLO mode is enabled…" on stderr). Sources, all in that tree:
//
//   - packages/cli/src/config/config.ts: -p/--prompt (headless), -m/--model,
//     -o/--output-format text|json|stream-json, --approval-mode
//     default|auto_edit|yolo|plan (--yolo is its alias and may not be combined
//     with it), -r/--resume latest|<index>|<uuid>; yargs is strict, and a
//     parse error prints the message and help and exits 1.
//   - packages/core/src/output/types.ts and packages/cli/src/nonInteractiveCli.ts:
//     stream-json events init{session_id,model}, message{role,content,delta}
//     (assistant text arrives as delta chunks), tool_use{tool_name,tool_id,
//     parameters}, tool_result{tool_id,status,output,error}, error{severity,
//     message}, result{status,error{type,message},stats{input_tokens,
//     output_tokens,cached,…}}; every event has a timestamp.
//   - packages/cli/src/utils/errors.ts: a fatal error in stream-json mode is a
//     result event with status "error", then exit with the error's code (1 by
//     default).
//   - packages/cli/src/validateNonInterActiveAuth.ts and config/auth.ts:
//     without an auth method the CLI logs "Please set an Auth method in your
//     … settings.json or specify one of the following environment variables
//     before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI,
//     GOOGLE_GENAI_USE_GCA" to stderr and exits 41 (nothing on stdout).
//   - packages/cli/src/gemini.tsx and utils/sessionUtils.ts: an unknown resume
//     id prints "Error resuming session: Invalid session identifier …" (or
//     "No previous sessions found for this project.") and exits 42.
//   - packages/core/src/config/storage.ts, projectRegistry.ts,
//     services/chatRecordingService.ts: sessions are
//     ~/.gemini/tmp/<project slug>/chats/session-<YYYY-MM-DDTHH-MM>-<id[:8]>.jsonl,
//     a metadata line then one line per message; the slug is registered in
//     ~/.gemini/projects.json.
//   - docs/reference/configuration.md: GEMINI_CLI_SYSTEM_SETTINGS_PATH
//     overrides the system settings file, the layer that wins over user and
//     project settings; Command points it at <CapRoot>/gemini/settings.json
//     ({"mcpServers":{…}}).
//   - packages/core/src/utils/trust.ts: GEMINI_CLI_TRUST_WORKSPACE=true
//     trusts the workspace whatever the folder-trust setting says.
//
// Only GEMINI_API_KEY is listed as a secret: Vertex AI needs two variables
// (GOOGLE_GENAI_USE_VERTEXAI and GOOGLE_API_KEY or ADC), which "any one
// suffices" cannot express.
var gemini = &Harness{
	Name:    "gemini",
	Binary:  "gemini",
	Secrets: []string{"GEMINI_API_KEY"},
	Endpoints: []Endpoint{
		{Secret: "GEMINI_API_KEY", Host: "generativelanguage.googleapis.com", BaseURLs: []string{"GOOGLE_GEMINI_BASE_URL"}},
	},
	WrittenAgainst: "0.61.0",
	Package:        "@google/gemini-cli",
	Description:    "Google's Gemini CLI in headless mode with stream-json output",
	command:        geminiCommand,
	newParser:      func(h *Harness) Parser { return &geminiParser{turn: turn{h: h}} },
}

func geminiCommand(inv Invocation) ([]string, map[string]string) {
	argv := []string{"gemini", "--output-format", "stream-json", "--approval-mode", "yolo"}
	if inv.Model != "" {
		argv = append(argv, "--model", inv.Model)
	}
	if inv.ResumeID != "" {
		argv = append(argv, "--resume", inv.ResumeID)
	}
	// --prompt=<text> keeps a prompt that starts with "-" a value.
	argv = append(argv, "--prompt="+inv.Prompt)
	env := map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"}
	if inv.HasMCP {
		env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = filepath.Join(inv.CapRoot, "gemini", "settings.json")
	}
	return argv, env
}

type geminiParser struct {
	turn
	text strings.Builder // assistant deltas not yet emitted
}

type geminiLine struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	Severity   string          `json:"severity"`
	Message    string          `json:"message"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
	} `json:"stats"`
}

// flush emits the assistant text gathered from deltas as one message.
func (p *geminiParser) flush() []Event {
	text := p.text.String()
	p.text.Reset()
	return p.message(text)
}

func (p *geminiParser) Feed(line []byte) []Event {
	var l geminiLine
	if !p.decode(line, &l) {
		return nil
	}
	switch l.Type {
	case "init":
		p.sessionID = l.SessionID
		return nil
	case "message":
		if l.Role == "assistant" {
			p.text.WriteString(l.Content)
		}
		// The user message echoes the prompt, which the caller records.
		return nil
	}
	out := p.flush()
	switch l.Type {
	case "tool_use":
		out = append(out, toolCall(l.ToolID, l.ToolName, l.Parameters))
	case "tool_result":
		output := l.Output
		if l.Error != nil && output == "" {
			output = l.Error.Message
		}
		out = append(out, toolResult(l.ToolID, output, l.Status == "error"))
	case "error":
		// Warnings (loop detected, blocked by a hook) do not fail the turn.
		if l.Severity == "error" {
			out = append(out, p.fail("", l.Message)...)
		}
	case "result":
		if l.Stats != nil {
			out = append(out, usage(TurnUsage{
				InputTokens:     l.Stats.InputTokens,
				OutputTokens:    l.Stats.OutputTokens,
				CacheReadTokens: l.Stats.Cached,
			}))
		}
		if l.Status == "error" && !p.errored {
			code, msg := "", "gemini reported an error"
			if l.Error != nil {
				code, msg = l.Error.Type, l.Error.Message
			}
			out = append(out, p.fail(code, msg)...)
		}
	}
	return out
}

func (p *geminiParser) Finish(exitCode int, stderrTail string) []Event {
	return append(p.flush(), p.finish(exitCode, stderrTail)...)
}
