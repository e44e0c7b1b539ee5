package client

import "encoding/json"

// The API's wire types are generated from api/openapi.yaml into
// wire.gen.go (scripts/gen-openapi.sh). This file holds what the spec
// cannot say in Go: the values of its enums as constants, and the methods
// of the generated types.

// Network modes.
const (
	NetworkNone  = "none"  // loopback only
	NetworkProxy = "proxy" // only paddock's egress proxy, which applies Allow and Deny
	NetworkOpen  = "open"  // full outbound access, but not the host's own services
)

// UnmarshalJSON also accepts a bare mode string: "proxy" is
// {"mode":"proxy"}, the spec's NetworkPolicy oneOf.
func (n *NetworkPolicy) UnmarshalJSON(b []byte) error {
	var mode string
	if err := json.Unmarshal(b, &mode); err == nil {
		*n = NetworkPolicy{Mode: mode}
		return nil
	}
	type plain NetworkPolicy
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*n = NetworkPolicy(p)
	return nil
}

// Runtime status values.
const (
	RuntimeIdle     = "idle"
	RuntimeStarting = "starting"
	RuntimeRunning  = "running"
	RuntimePaused   = "paused"
	RuntimeArchived = "archived"
	RuntimeError    = "error"
)

// Sandbox kinds, states and pause reasons.
const (
	KindRuntime = "runtime"
	KindTask    = "task"
	KindWorld   = "world"

	SandboxStarting = "starting"
	SandboxRunning  = "running"
	SandboxPaused   = "paused"
	SandboxKilled   = "killed"

	PauseUser                = "user"
	PauseTimeout             = "timeout"
	PauseInsufficientCredits = "insufficient_credits"
	PauseMemberLimitExceeded = "member_limit_exceeded"
)

// Exec event types: one NDJSON line each in a streamed exec or attach.
const (
	EventStarted = "started" // ID and PID
	EventOutput  = "output"  // Stream, Offset, Data
	EventLost    = "lost"    // Stream, Offset, Bytes: output dropped before it could be sent
	EventExit    = "exit"    // Exit; the last event
	EventError   = "error"   // Error; the stream ends without an exit
)

// Output stream names.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)

// File types.
const (
	FileTypeFile      = "file"
	FileTypeDirectory = "directory"
	FileTypeSymlink   = "symlink"
	FileTypeOther     = "other"
)

// IsDir reports whether the file is a directory.
func (f FileInfo) IsDir() bool { return f.Type == FileTypeDirectory }

// Terminal control message types. Binary WebSocket messages carry the
// terminal's bytes both ways; text messages carry one TerminalMessage.
const (
	TerminalStarted = "started" // server → client: ID and PID
	TerminalResize  = "resize"  // client → server: Rows and Cols
	TerminalSignal  = "signal"  // client → server: Signal
	TerminalClose   = "close"   // client → server: end the terminal now (else a dropped link leaves it to be re-attached)
	TerminalExit    = "exit"    // server → client: Exit; the session ends
	TerminalError   = "error"   // server → client: Error; a refused control message (the session goes on) or a failure (the session closes)
)

// Capability sources.
const (
	SourceCatalog   = "catalog"   // built into paddock
	SourceInventory = "inventory" // uploaded to the org
)

// Binding apply states.
const (
	BindingPending = "pending" // not yet applied to the current sandbox
	BindingApplied = "applied" // materialized; setup ran
	BindingFailed  = "failed"  // materializing or a setup script failed
)

// Worker states.
const (
	WorkerRunning = "running"
	WorkerExited  = "exited" // stopped by itself: crashed, or finished
	WorkerStopped = "stopped"
)

// Session kinds and states.
const (
	SessionPrompt = "prompt"
	SessionTask   = "task"

	SessionRunning   = "running"
	SessionCompleted = "completed"
	SessionFailed    = "failed"
)

// Event types in a session's transcript, one schema for every harness.
const (
	SessionEventMessage    = "message"
	SessionEventToolCall   = "tool_call"
	SessionEventToolResult = "tool_result"
	SessionEventUsage      = "usage"
	SessionEventError      = "error"
	SessionEventDone       = "done"
)

// Credit movement kinds.
const (
	EntryGrant      = "grant"      // credits added by an admin
	EntryAdjustment = "adjustment" // balance set by an admin
	EntryHold       = "hold"       // credits reserved for a start or resume
	EntryRelease    = "release"    // a hold freed: the compute never ran
	EntryDeduction  = "deduction"  // compute charged
	EntryRefund     = "refund"     // prepaid compute that did not run, returned
)

// Usage groupings.
const (
	UsageBySandbox   = "sandbox"
	UsageByRuntime   = "runtime"
	UsageByProject   = "project"
	UsageByWorkspace = "workspace"
	UsageByOrg       = "org"
)

// Roles in an org, lowest first: a viewer reads; a member operates
// runtimes (start, pause, exec, files, terminal, prompts); an admin
// manages projects, runtime configuration, capabilities, members, keys and
// secrets; an owner also manages billing settings (member limits) and
// owners.
const (
	RoleViewer = "viewer"
	RoleMember = "member"
	RoleAdmin  = "admin"
	RoleOwner  = "owner"
)

// Invitation states.
const (
	InvitationPending  = "pending"
	InvitationAccepted = "accepted"
	InvitationDeclined = "declined"
	InvitationRevoked  = "revoked"
	InvitationExpired  = "expired"
)

// Invitee is who an invitation is for: its email, else its wallet
// address.
func (i Invitation) Invitee() string {
	if i.Email != "" {
		return i.Email
	}
	return i.Wallet
}
