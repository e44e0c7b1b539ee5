package harness

import (
	"encoding/json"
	"time"
)

// Event types, one schema for every harness.
const (
	EventMessage    = "message"
	EventToolCall   = "tool_call"
	EventToolResult = "tool_result"
	EventUsage      = "usage"
	EventError      = "error"
	EventDone       = "done"
)

// Event is one event of a turn, in the common schema every harness's
// stream is parsed into. Exactly one of the payload fields matching Type
// is set (Role and Text for a message). A Parser leaves Seq, Turn and Time
// to the session that records the event.
//
// Event is paddock's own type, not the SDK's: its JSON tags are the shape
// a session's transcript keeps (see session's transcript encoding, which
// versions it), and the API converts it to the wire type at its boundary.
// Changing a tag changes stored rows: it takes a new transcript version.
type Event struct {
	Seq  int64     `json:"seq"`
	Turn int       `json:"turn"`
	Time time.Time `json:"time"`
	Type string    `json:"type"`
	// Role is user (the prompt) or assistant.
	Role   string      `json:"role,omitempty"`
	Text   string      `json:"text,omitempty"`
	Tool   *ToolCall   `json:"tool,omitempty"`
	Result *ToolResult `json:"result,omitempty"`
	Usage  *TurnUsage  `json:"usage,omitempty"`
	Error  *TurnError  `json:"error,omitempty"`
	Done   *TurnDone   `json:"done,omitempty"`
}

// ToolCall is a tool the agent called.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
}

// ToolResult is what a tool call returned.
type ToolResult struct {
	ID      string `json:"id"`
	Output  string `json:"output"`
	IsError bool   `json:"is_error"`
}

// TurnUsage is what a turn consumed, as the harness reports it.
type TurnUsage struct {
	InputTokens     int64   `json:"input_tokens"`
	OutputTokens    int64   `json:"output_tokens"`
	CacheReadTokens int64   `json:"cache_read_tokens,omitempty"`
	CostUSD         float64 `json:"cost_usd,omitempty"`
}

// TurnError is an error the harness or paddock reported.
type TurnError struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// TurnDone ends a turn.
type TurnDone struct {
	ExitCode         int    `json:"exit_code"`
	HarnessSessionID string `json:"harness_session_id,omitempty"`
	Result           string `json:"result,omitempty"`
}
