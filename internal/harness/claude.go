package harness

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Claude Code, followed at 2.1.240 (the newest CHANGELOG.md entry in
// anthropics/claude-code when this was written; the CLI itself is not open
// source) and checked against the pinned 2.1.332 on the paths that need no
// model (testdata/claude-code/captured-2.1.332-*). Sources:
//
//   - Flags: the CLI reference docs (`-p/--print`, `--output-format
//     stream-json` which needs `--verbose` in print mode, `--resume <id>`,
//     `--mcp-config <file>`, `--model`, `--dangerously-skip-permissions`).
//   - As root, bypass mode exits 1 with "--dangerously-skip-permissions
//     cannot be used with root/sudo privileges for security reasons" unless
//     IS_SANDBOX=1 (anthropics/claude-code#3490 and the guard quoted in
//     h0x91b/dev-3.0#1575). Sandboxes often run as root, so Command sets it.
//   - stream-json lines: the Agent SDK's SDKMessage types (system/init with
//     session_id, tools, mcp_servers [{name,status}], model,
//     permissionMode, apiKeySource, claude_code_version; assistant and user
//     lines wrapping Messages API content blocks; result with subtype,
//     is_error, result, session_id, total_cost_usd, usage), and a recorded
//     2.1.278 session (system/init fields, one assistant line per content
//     block, user lines carrying tool_result blocks).
//   - An assistant line may carry "error" (authentication_failed,
//     billing_error, rate_limit, invalid_request, server_error, unknown) with
//     the error text as its content; the result then has is_error true
//     (SDKAssistantMessage in the Agent SDK types). Without credentials
//     print mode reports "Not logged in · Please run /login" this way
//     (CHANGELOG 2.1.2xx mentions that text; the exact line shape is
//     inferred from the SDK types).
//   - Unknown --resume id: 2.1.332 prints one result line on stdout,
//     {"type":"result","subtype":"error_during_execution","is_error":true,
//     "errors":["No conversation found with session ID: <id>"],…}, with no
//     init line and no "result" text, and exits 1 (captured from the real
//     CLI: testdata/claude-code/captured-2.1.332-*.stdout). errors[] is where
//     a result that ends before any model call says why.
//   - A refused tunnel through HTTPS_PROXY: ten system/api_retry lines with
//     backoff (0.5 s doubling to about 35 s, 202 s in all), then the
//     assistant error server_error "API Error: Couldn't connect through
//     your proxy (ERR_PROXY_TUNNEL) …" and exit 1
//     (testdata/claude-code/captured-2.1.332-proxy-refused.*).
//   - Transcripts: ~/.claude/projects/<cwd with every non-alphanumeric
//     character replaced by "-">/<session id>.jsonl.
var claudeCode = &Harness{
	Name:    "claude-code",
	Binary:  "claude",
	Secrets: []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"},
	Endpoints: []Endpoint{
		{Secret: "ANTHROPIC_API_KEY", Host: "api.anthropic.com", BaseURLs: []string{"ANTHROPIC_BASE_URL"}},
		{Secret: "CLAUDE_CODE_OAUTH_TOKEN", Host: "api.anthropic.com", BaseURLs: []string{"ANTHROPIC_BASE_URL"}},
	},
	WrittenAgainst: "2.1.332",
	Package:        "@anthropic-ai/claude-code",
	Description:    "Anthropic's Claude Code in print mode with stream-json output",
	command:        claudeCommand,
	newParser:      func(h *Harness) Parser { return &claudeParser{turn: turn{h: h}} },
}

func claudeCommand(inv Invocation) ([]string, map[string]string) {
	argv := []string{"claude", "-p",
		"--output-format", "stream-json", "--verbose",
		"--dangerously-skip-permissions"}
	if inv.Model != "" {
		argv = append(argv, "--model", inv.Model)
	}
	if inv.HasMCP {
		argv = append(argv, "--mcp-config", filepath.Join(inv.CapRoot, "mcp.json"))
	}
	if inv.ResumeID != "" {
		argv = append(argv, "--resume", inv.ResumeID)
	}
	// "--" keeps a prompt that starts with "-" from being read as a flag.
	argv = append(argv, "--", inv.Prompt)
	return argv, map[string]string{"IS_SANDBOX": "1"}
}

type claudeParser struct {
	turn
}

type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Message   *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	Error        json.RawMessage `json:"error"`
	IsError      bool            `json:"is_error"`
	Result       string          `json:"result"`
	Errors       []string        `json:"errors"`
	TotalCostUSD float64         `json:"total_cost_usd"`
	Usage        *struct {
		InputTokens              int64 `json:"input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
	} `json:"usage"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// claudeBlocks decodes message content: a string or an array of blocks.
func claudeBlocks(raw json.RawMessage) []claudeBlock {
	if s := jsonString(raw); s != "" {
		return []claudeBlock{{Type: "text", Text: s}}
	}
	var blocks []claudeBlock
	_ = json.Unmarshal(raw, &blocks)
	return blocks
}

// claudeText joins the text of a tool_result's content (a string or blocks).
func claudeText(raw json.RawMessage) string {
	var parts []string
	for _, b := range claudeBlocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (p *claudeParser) Feed(line []byte) []Event {
	var l claudeLine
	if !p.decode(line, &l) {
		return nil
	}
	if l.SessionID != "" {
		p.sessionID = l.SessionID
	}
	var out []Event
	switch l.Type {
	case "assistant":
		if l.Message == nil {
			return nil
		}
		blocks := claudeBlocks(l.Message.Content)
		if kind := jsonString(l.Error); kind != "" {
			// A synthetic assistant message carrying an API or auth error.
			var text []string
			for _, b := range blocks {
				if b.Type == "text" {
					text = append(text, b.Text)
				}
			}
			return p.fail(kind, strings.Join(text, "\n"))
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				out = append(out, p.message(b.Text)...)
			case "tool_use":
				out = append(out, toolCall(b.ID, b.Name, b.Input))
			}
			// thinking and redacted_thinking blocks are not transcript text.
		}
	case "user":
		if l.Message == nil {
			return nil
		}
		for _, b := range claudeBlocks(l.Message.Content) {
			if b.Type == "tool_result" {
				out = append(out, toolResult(b.ToolUseID, claudeText(b.Content), b.IsError))
			}
		}
	case "result":
		if l.Usage != nil {
			out = append(out, usage(TurnUsage{
				InputTokens:     l.Usage.InputTokens + l.Usage.CacheCreationInputTokens + l.Usage.CacheReadInputTokens,
				OutputTokens:    l.Usage.OutputTokens,
				CacheReadTokens: l.Usage.CacheReadInputTokens,
				CostUSD:         l.TotalCostUSD,
			}))
		}
		switch {
		case l.IsError && !p.errored:
			msg := l.Result
			if msg == "" {
				msg = strings.Join(l.Errors, "\n")
			}
			if msg == "" {
				msg = "claude reported " + l.Subtype
			}
			out = append(out, p.fail(l.Subtype, msg)...)
		case !l.IsError && p.lastText == "":
			p.lastText = l.Result
		}
	}
	// system (init, status, hooks), stream_event, rate_limit_event and the
	// other envelopes carry nothing for the transcript.
	return out
}

func (p *claudeParser) Finish(exitCode int, stderrTail string) []Event {
	return p.finish(exitCode, stderrTail)
}
