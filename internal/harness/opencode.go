package harness

import (
	"encoding/json"
	"path/filepath"
)

// OpenCode (the opencode-ai npm package, OpenCode V1), followed from
// packages/opencode/src/cli/cmd/run.ts of anomalyco/opencode (formerly
// sst/opencode) on its 1.18.3x main. Sources:
//
//   - run.ts: `opencode run [message..]` with --format default|json,
//     -s/--session <id>, -c/--continue, -m/--model provider/model, --dir,
//     --auto ("auto-approve permissions that are not explicitly denied";
//     --yolo and --dangerously-skip-permissions are hidden aliases); words
//     after "--" are part of the message; a piped stdin is appended to it.
//   - run.ts, --format json: one line per event, {"type","timestamp",
//     "sessionID", …}: step_start{part}, text{part{text,time{end}}},
//     reasoning{part}, tool_use{part{callID,tool,state{status,input,output,
//     error}}} (sent once the tool completed or failed, so it carries call
//     and result), step_finish{part{reason,cost,tokens{input,output,
//     reasoning,cache{read,write}}}}, error{error{name,data{message}}} and,
//     on newer builds, done{reason}. An error sets exit code 1.
//   - run.ts: an unknown --session prints "Session not found" as an error on
//     stderr and exits 1.
//   - opencode.ai/docs/config (V1): OPENCODE_CONFIG names a config file
//     merged over the global one; its "mcp" object maps a name to
//     {"type":"local","command":[…],"environment":{…}} or
//     {"type":"remote","url":…}.
//   - Credentials: each provider reads its usual variable (models.dev
//     provider env lists; ANTHROPIC_API_KEY, OPENAI_API_KEY,
//     OPENROUTER_API_KEY; OPENCODE_API_KEY for OpenCode Zen). A provider
//     without its key fails the turn with a ProviderAuthError-like error
//     event (the exact name and text are not confirmed).
//   - Storage: under $XDG_DATA_HOME/opencode (~/.local/share/opencode);
//     1.18 keeps sessions in opencode.db there (SQLite).
var openCode = &Harness{
	Name:    "opencode",
	Binary:  "opencode",
	Secrets: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "OPENCODE_API_KEY"},
	Endpoints: []Endpoint{
		{Secret: "ANTHROPIC_API_KEY", Host: "api.anthropic.com", Provider: "anthropic", BaseURLs: []string{"ANTHROPIC_BASE_URL"}},
		{Secret: "OPENAI_API_KEY", Host: "api.openai.com", Provider: "openai", BaseURLs: []string{"OPENAI_BASE_URL"}},
		{Secret: "OPENROUTER_API_KEY", Host: "openrouter.ai", Provider: "openrouter"},
		{Secret: "OPENCODE_API_KEY", Host: "opencode.ai", Provider: "opencode"},
	},
	WrittenAgainst: "1.18.33",
	Package:        "opencode-ai",
	Description:    "OpenCode's `opencode run` with JSON events",
	command:        openCodeCommand,
	newParser:      func(h *Harness) Parser { return &openCodeParser{turn: turn{h: h}} },
}

func openCodeCommand(inv Invocation) ([]string, map[string]string) {
	argv := []string{"opencode", "run", "--format", "json", "--auto"}
	if inv.Workdir != "" {
		argv = append(argv, "--dir", inv.Workdir)
	}
	if inv.Model != "" {
		argv = append(argv, "--model", inv.Model)
	}
	if inv.ResumeID != "" {
		argv = append(argv, "--session", inv.ResumeID)
	}
	argv = append(argv, "--", inv.Prompt)
	env := map[string]string{}
	if inv.HasMCP {
		env["OPENCODE_CONFIG"] = filepath.Join(inv.CapRoot, "opencode.json")
	}
	return argv, env
}

type openCodeParser struct {
	turn
	usage *TurnUsage // summed over the turn's steps
}

type openCodeLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      *struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		CallID string `json:"callID"`
		Tool   string `json:"tool"`
		State  *struct {
			Status string          `json:"status"`
			Input  json.RawMessage `json:"input"`
			Output string          `json:"output"`
			Error  string          `json:"error"`
		} `json:"state"`
		Cost   float64 `json:"cost"`
		Tokens *struct {
			Input  int64 `json:"input"`
			Output int64 `json:"output"`
			Cache  struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
	} `json:"part"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

func (p *openCodeParser) Feed(line []byte) []Event {
	var l openCodeLine
	if !p.decode(line, &l) {
		return nil
	}
	if l.SessionID != "" {
		p.sessionID = l.SessionID
	}
	switch l.Type {
	case "text":
		if l.Part != nil {
			return p.message(l.Part.Text)
		}
	case "tool_use":
		if l.Part == nil || l.Part.State == nil {
			return nil
		}
		s := l.Part.State
		output, isErr := s.Output, s.Status == "error"
		if isErr && s.Error != "" {
			output = s.Error
		}
		return []Event{
			toolCall(l.Part.CallID, l.Part.Tool, s.Input),
			toolResult(l.Part.CallID, output, isErr),
		}
	case "step_finish":
		if l.Part == nil || l.Part.Tokens == nil {
			return nil
		}
		if p.usage == nil {
			p.usage = &TurnUsage{}
		}
		t := l.Part.Tokens
		// OpenCode counts cache reads and writes apart from input.
		p.usage.InputTokens += t.Input + t.Cache.Read + t.Cache.Write
		p.usage.OutputTokens += t.Output
		p.usage.CacheReadTokens += t.Cache.Read
		p.usage.CostUSD += l.Part.Cost
	case "error":
		code, msg := "", "opencode reported an error"
		if l.Error != nil {
			code, msg = l.Error.Name, l.Error.Data.Message
			if msg == "" {
				msg = l.Error.Name
			}
		}
		return p.fail(code, msg)
	}
	// step_start, reasoning and done carry nothing for the transcript.
	return nil
}

func (p *openCodeParser) Finish(exitCode int, stderrTail string) []Event {
	var out []Event
	if p.usage != nil {
		out = append(out, usage(*p.usage))
		p.usage = nil
	}
	return append(out, p.finish(exitCode, stderrTail)...)
}
