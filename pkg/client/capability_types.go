package client

import (
	"encoding/json"
	"time"
)

// Capability sources.
const (
	SourceCatalog   = "catalog"   // built into paddock
	SourceInventory = "inventory" // uploaded to the org
)

// CapabilityVersion is one version of a capability bundle, in the built-in
// catalog or an org's inventory.
type CapabilityVersion struct {
	ID          string             `json:"id,omitempty"` // inventory only
	Source      string             `json:"source"`
	Name        string             `json:"name"`
	Version     string             `json:"version"`
	Description string             `json:"description"`
	Digest      string             `json:"digest"` // sha256 of the canonical bundle
	SizeBytes   int64              `json:"size_bytes"`
	Contents    CapabilityContents `json:"contents"`
	CreatedAt   *time.Time         `json:"created_at,omitempty"` // inventory only
}

// CapabilityContents names what a bundle ships.
type CapabilityContents struct {
	Agents     []string         `json:"agents"`
	Skills     []string         `json:"skills"`
	Tools      []string         `json:"tools"`
	MCPServers []string         `json:"mcp_servers"`
	Workers    []string         `json:"workers"`
	Setup      []string         `json:"setup"`
	Checks     []string         `json:"checks"`
	Flags      []CapabilityFlag `json:"flags"`
}

// CapabilityFlag is a boolean a binding sets to gate MCP servers and
// workers.
type CapabilityFlag struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
}

// BindingConfig is a binding's own configuration.
type BindingConfig struct {
	// Flags override the bundle's flag defaults.
	Flags map[string]bool `json:"flags,omitempty"`
}

// CapabilityBinding attaches a capability version to a runtime.
type CapabilityBinding struct {
	ID        string         `json:"id"`
	RuntimeID string         `json:"runtime_id"`
	Source    string         `json:"source"`
	Name      string         `json:"name"`
	Version   string         `json:"version"`
	Enabled   bool           `json:"enabled"`
	Config    BindingConfig  `json:"config"`
	Status    *BindingStatus `json:"status,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// Binding apply states.
const (
	BindingPending = "pending" // not yet applied to the current sandbox
	BindingApplied = "applied" // materialized; setup ran
	BindingFailed  = "failed"  // materializing or a setup script failed
)

// BindingStatus is what happened when a binding was last applied to a
// sandbox: its setup scripts, checks and workers.
type BindingStatus struct {
	State     string         `json:"state"`
	Error     string         `json:"error,omitempty"`
	SandboxID string         `json:"sandbox_id,omitempty"`
	AppliedAt *time.Time     `json:"applied_at,omitempty"`
	Setup     []StepResult   `json:"setup"`
	Checks    []StepResult   `json:"checks"`
	Workers   []WorkerStatus `json:"workers"`
}

// StepResult is one setup script's or check's run.
type StepResult struct {
	Name       string    `json:"name"`
	OK         bool      `json:"ok"`
	ExitCode   int       `json:"exit_code"`
	Output     string    `json:"output"` // the last 4 KiB of stdout and stderr
	DurationMS int64     `json:"duration_ms"`
	RanAt      time.Time `json:"ran_at"`
}

// Worker states.
const (
	WorkerRunning = "running"
	WorkerExited  = "exited" // stopped by itself: crashed, or finished
	WorkerStopped = "stopped"
)

// WorkerStatus is one worker's process.
type WorkerStatus struct {
	Name      string     `json:"name"`
	ProcessID string     `json:"process_id,omitempty"`
	State     string     `json:"state"`
	ExitCode  *int       `json:"exit_code,omitempty"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	Output    string     `json:"output,omitempty"` // its last 4 KiB, once exited
}

// InstallCapabilityRequest installs a capability on a runtime.
type InstallCapabilityRequest struct {
	Name string `json:"name"`
	// Version pins a version; empty takes the newest, pinned at install.
	Version string `json:"version,omitempty"`
	// Source is catalog or inventory; empty looks in the org's inventory
	// first, then the catalog.
	Source string `json:"source,omitempty"`
	// Enabled defaults to true.
	Enabled *bool          `json:"enabled,omitempty"`
	Config  *BindingConfig `json:"config,omitempty"`
}

// UpdateBindingRequest changes a binding. Config replaces the binding's
// config when given; Version moves the pin.
type UpdateBindingRequest struct {
	Enabled *bool          `json:"enabled,omitempty"`
	Config  *BindingConfig `json:"config,omitempty"`
	Version string         `json:"version,omitempty"`
}

// ResolvedCapabilities is the merged set of a runtime's enabled bindings,
// and where it is materialized in the sandbox.
type ResolvedCapabilities struct {
	RuntimeID string `json:"runtime_id"`
	// Path is the directory the bundles are materialized under.
	Path       string               `json:"path"`
	Bindings   []ResolvedBinding    `json:"bindings"`
	Agents     []ResolvedItem       `json:"agents"`
	Skills     []ResolvedItem       `json:"skills"`
	Tools      []ResolvedItem       `json:"tools"`
	MCPServers []ResolvedMCPServer  `json:"mcp_servers"`
	Workers    []ResolvedItem       `json:"workers"`
	Setup      []ResolvedItem       `json:"setup"`
	Checks     []ResolvedItem       `json:"checks"`
	Conflicts  []CapabilityConflict `json:"conflicts"`
}

// ResolvedBinding is one enabled binding in a resolved set.
type ResolvedBinding struct {
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	Version string         `json:"version"`
	Status  *BindingStatus `json:"status,omitempty"`
}

// ResolvedItem is an agent, skill, tool, worker, setup script or check,
// and the capability it comes from.
type ResolvedItem struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Capability  string `json:"capability"`
	// Path is where it is in the sandbox, when it is a file.
	Path string `json:"path,omitempty"`
}

// ResolvedMCPServer is an MCP server definition in a resolved set.
type ResolvedMCPServer struct {
	Name       string            `json:"name"`
	Capability string            `json:"capability"`
	Type       string            `json:"type"` // stdio or http
	Command    string            `json:"command,omitempty"`
	Args       []string          `json:"args,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	URL        string            `json:"url,omitempty"`
}

// CapabilityConflict is a name two enabled bindings both ship. The binding
// installed first keeps it; the conflict is reported, never silently
// resolved.
type CapabilityConflict struct {
	Kind         string   `json:"kind"` // agent, skill, tool, mcp_server, worker
	Name         string   `json:"name"`
	Capabilities []string `json:"capabilities"`
}

// PromptRequest runs one turn of an agent harness in the runtime's
// sandbox.
type PromptRequest struct {
	Prompt string `json:"prompt"`
	// Harness is one of GET /api/capabilities' harnesses; empty: the
	// session's, or the installation's default.
	Harness string `json:"harness,omitempty"`
	// SessionID continues a session (prompt only); empty starts one.
	SessionID      string `json:"session_id,omitempty"`
	Model          string `json:"model,omitempty"`
	TimeoutSeconds int64  `json:"timeout_seconds,omitempty"`
}

// PromptResult is the answer of a prompt or task without streaming.
type PromptResult struct {
	Session Session        `json:"session"`
	Result  string         `json:"result"` // the last assistant message
	Error   string         `json:"error,omitempty"`
	Usage   *TurnUsage     `json:"usage,omitempty"`
	Events  []SessionEvent `json:"events"` // this turn's
}

// Session kinds and states.
const (
	SessionPrompt = "prompt"
	SessionTask   = "task"

	SessionRunning   = "running"
	SessionCompleted = "completed"
	SessionFailed    = "failed"
)

// Session is an agent conversation on a runtime: it references the
// runtime, never a sandbox.
type Session struct {
	ID        string `json:"id"`
	RuntimeID string `json:"runtime_id"`
	Kind      string `json:"kind"`
	Harness   string `json:"harness"`
	// HarnessSessionID is the harness's own conversation id, which the
	// next prompt resumes.
	HarnessSessionID string    `json:"harness_session_id,omitempty"`
	Status           string    `json:"status"`
	Title            string    `json:"title"`
	Turns            int       `json:"turns"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// SessionTranscript is a session with its events.
type SessionTranscript struct {
	Session
	Events []SessionEvent `json:"events"`
}

// Event types in a session's transcript, one schema for every harness.
const (
	SessionEventMessage    = "message"
	SessionEventToolCall   = "tool_call"
	SessionEventToolResult = "tool_result"
	SessionEventUsage      = "usage"
	SessionEventError      = "error"
	SessionEventDone       = "done"
)

// SessionEvent is one event of a session, in the common schema every
// harness's stream is parsed into. Exactly one of the payload fields
// matching Type is set (Role and Text for a message).
type SessionEvent struct {
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

// HarnessInfo is one agent harness this installation can run.
type HarnessInfo struct {
	Name   string `json:"name"`
	Binary string `json:"binary"`
	// Secrets are the environment variables it takes its model
	// credentials from: any one of them is enough.
	Secrets []string `json:"secrets"`
	// WrittenAgainst is the CLI version its event parser follows.
	WrittenAgainst string `json:"written_against"`
	// Installed: the default image has its CLI.
	Installed bool `json:"installed"`
	// Images are the sandbox images known to have its CLI.
	Images []string `json:"images"`
}

// SidecarCapability is a value runtimes may list in capabilities_json.
type SidecarCapability struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Image       string `json:"image"`
	Available   bool   `json:"available"` // its image is present
}
