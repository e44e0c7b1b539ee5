package client

import (
	"encoding/json"
	"time"
)

// This file is the HTTP API's wire format. The server encodes these types
// and the SDK decodes them, so the two cannot drift.

// Error is the one JSON error body of the API.
type Error struct {
	// StatusCode is the HTTP status; it is not part of the body.
	StatusCode int    `json:"-"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	RequestID  string `json:"request_id,omitempty"`
}

// List is one page of a listing. NextCursor is empty on the last page; pass
// it as ?cursor= to get the next one.
type List[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// Org is the billing unit.
type Org struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateOrgRequest creates an org. Name is a slug: lowercase letters,
// digits and dashes, 1 to 63 characters, starting with a letter or digit.
type CreateOrgRequest struct {
	Name string `json:"name"`
}

// Workspace groups projects inside an org.
type Workspace struct {
	ID        string    `json:"id"`
	OrgID     string    `json:"org_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateWorkspaceRequest creates a workspace; Name is a slug.
type CreateWorkspaceRequest struct {
	Name string `json:"name"`
}

// Project is a unit of work; it has exactly one runtime, RuntimeID.
type Project struct {
	ID          string    `json:"id"`
	OrgID       string    `json:"org_id"`
	WorkspaceID string    `json:"workspace_id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	RuntimeID   string    `json:"runtime_id"`
	CreatedAt   time.Time `json:"created_at"`
}

// CreateProjectRequest creates a project and its runtime. Runtime is
// optional; unset fields take the installation's defaults.
type CreateProjectRequest struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Runtime     *RuntimeConfig `json:"runtime,omitempty"`
}

// RuntimeConfig is a runtime's durable configuration.
type RuntimeConfig struct {
	Image     string `json:"image,omitempty"`
	Provider  string `json:"provider,omitempty"`
	CPUMillis int64  `json:"cpu_millis,omitempty"`
	MemoryMB  int64  `json:"memory_mb,omitempty"`
	PidsLimit int64  `json:"pids_limit,omitempty"`
	// DiskMB is the workspace's disk quota in MiB, fixed when the
	// workspace is created; writes past it fail with ENOSPC.
	DiskMB int64 `json:"disk_mb,omitempty"`
	// Network is the egress policy; nil means the default (none).
	Network            *NetworkPolicy `json:"network,omitempty"`
	IdleTimeoutSeconds int64          `json:"idle_timeout_seconds,omitempty"`
	// MaxLifetimeSeconds bounds how long a sandbox runs between a start
	// or resume and its next pause, whatever its activity; 0 means none.
	MaxLifetimeSeconds int64 `json:"max_lifetime_seconds,omitempty"`
	// ArchiveAfterSeconds is how long the runtime may stay paused before
	// it is archived; 0 means the installation's default.
	ArchiveAfterSeconds int64 `json:"archive_after_seconds,omitempty"`
	// Secrets bound to the runtime, by id or name: injected into every
	// sandbox it starts.
	Secrets []string `json:"secrets,omitempty"`
	// RootFS is "readonly" (the default) or "writable": package managers
	// can install into a writable root. Its changes survive pause and
	// archive and are gone after a reset.
	RootFS string `json:"rootfs,omitempty"`
	// User is the account the sandbox's processes run as (and files
	// written through the API belong to) unless an exec names another:
	// "user" (uid 1000, home /home/user; the default) or "root".
	User string `json:"user,omitempty"`
	// CapabilitiesJSON is a JSON-encoded string array of sidecar
	// capabilities (GET /api/capabilities lists them), such as
	// ["computer_use"]; the sandbox sees it as SIDECAR_CAPABILITIES.
	CapabilitiesJSON string `json:"capabilities_json,omitempty"`
}

// Network modes.
const (
	NetworkNone  = "none"  // loopback only
	NetworkProxy = "proxy" // only paddock's egress proxy, which applies Allow and Deny
	NetworkOpen  = "open"  // full outbound access, but not the host's own services
)

// NetworkPolicy is a runtime's egress policy. A rule is a domain pattern
// ("pypi.org", "*.pypi.org"), host:port, or a CIDR; deny wins over allow.
type NetworkPolicy struct {
	Mode  string   `json:"mode,omitempty"`
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// UnmarshalJSON also accepts a bare mode string: "proxy" is
// {"mode":"proxy"}.
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

// Runtime is the durable agent environment of a project.
type Runtime struct {
	ID               string        `json:"id"`
	OrgID            string        `json:"org_id"`
	WorkspaceID      string        `json:"workspace_id"`
	ProjectID        string        `json:"project_id"`
	ProjectName      string        `json:"project_name,omitempty"`
	Status           string        `json:"status"`
	StatusReason     string        `json:"status_reason,omitempty"`
	Config           RuntimeConfig `json:"config"`
	CurrentSandboxID string        `json:"current_sandbox_id,omitempty"`
	// PauseReason and ExpiresAt come from the current sandbox.
	PauseReason string     `json:"pause_reason,omitempty"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	// CapabilityProblems are what went wrong applying its capabilities to
	// its current sandbox: failed setup scripts and checks, workers that
	// exited (GET …/runtimes/{id} only; …/capabilities has the detail).
	CapabilityProblems []string  `json:"capability_problems,omitempty"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

// StartRuntimeRequest is the optional body of start.
type StartRuntimeRequest struct {
	SecretIDs []string `json:"secret_ids,omitempty"`
}

// KeepaliveRequest is the optional body of keepalive. DurationSeconds 0
// means the runtime's idle timeout.
type KeepaliveRequest struct {
	DurationSeconds int64 `json:"duration_seconds,omitempty"`
}

// ResetRequest is the optional body of reset.
type ResetRequest struct {
	// WipeWorkspace deletes the workspace volume too; by default it is
	// kept for the next sandbox.
	WipeWorkspace bool `json:"wipe_workspace,omitempty"`
}

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

// Resources of a sandbox.
type Resources struct {
	CPUMillis int64 `json:"cpu_millis"`
	MemoryMB  int64 `json:"memory_mb"`
}

// Sandbox is one row of the org's compute ledger.
type Sandbox struct {
	ID                    string     `json:"id"`
	OrgID                 string     `json:"org_id"`
	WorkspaceID           string     `json:"workspace_id,omitempty"`
	ProjectID             string     `json:"project_id,omitempty"`
	ProjectName           string     `json:"project_name,omitempty"` // the project's name, while it exists
	RuntimeID             string     `json:"runtime_id,omitempty"`
	Kind                  string     `json:"kind"`
	State                 string     `json:"state"`
	PauseReason           string     `json:"pause_reason,omitempty"`
	Provider              string     `json:"provider"`
	ProviderSandboxID     string     `json:"provider_sandbox_id,omitempty"`
	Image                 string     `json:"image"`
	Resources             Resources  `json:"resources"`
	SecretIDs             []string   `json:"secret_ids,omitempty"`
	KillReason            string     `json:"kill_reason,omitempty"`
	Error                 string     `json:"error,omitempty"`
	BilledCredits         float64    `json:"billed_credits"`
	RunningCredits        float64    `json:"running_credits"`
	EstimatedTotalCredits float64    `json:"estimated_total_credits"`
	CreatedAt             time.Time  `json:"created_at"`
	StartedAt             *time.Time `json:"started_at,omitempty"`
	PausedAt              *time.Time `json:"paused_at,omitempty"`
	KilledAt              *time.Time `json:"killed_at,omitempty"`
	ExpiresAt             *time.Time `json:"expires_at,omitempty"`
	UpdatedAt             time.Time  `json:"updated_at"`
}

// SandboxFilter narrows a ledger listing. Empty fields match everything.
type SandboxFilter struct {
	Kind      string
	State     string
	Provider  string
	RuntimeID string
	Cursor    string
	Limit     int
}

// Capabilities describes what this installation offers.
type Capabilities struct {
	Version         string                        `json:"version"`
	DefaultProvider string                        `json:"default_provider"`
	Providers       map[string]ProviderCapability `json:"providers"`
	// Harnesses are the agent CLIs prompt and task can run.
	Harnesses      []HarnessInfo `json:"harnesses"`
	DefaultHarness string        `json:"default_harness"`
	// SidecarCapabilities are the values runtimes may list in
	// capabilities_json.
	SidecarCapabilities []SidecarCapability `json:"sidecar_capabilities"`
	// Images are the sandbox images this installation knows and whether
	// runtimes can use them yet (as GET /api/images).
	Images []ImageStatus `json:"images"`
}

// ImageStatus is one sandbox image: whether it is there, and how far its
// build is when the server builds it in the background.
type ImageStatus struct {
	Image string `json:"image"`
	// Target is the image builder's name for it ("" when the builder does
	// not make it).
	Target string `json:"target,omitempty"`
	// State is ready, building, pending (waits for the builds before it),
	// failed or missing (not there, and not being built).
	State string `json:"state"`
	// Present: runtimes can start on it now (an older copy may serve
	// while a newer one builds).
	Present bool `json:"present"`
	// Step of Steps is the build step under way, or last reached.
	Step  int `json:"step,omitempty"`
	Steps int `json:"steps,omitempty"`
	// Progress says how far the build is, or why it failed.
	Progress  string     `json:"progress,omitempty"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
}

// ProviderCapability is one provider's capability matrix.
type ProviderCapability struct {
	Isolation string   `json:"isolation"`
	Pause     bool     `json:"pause"`
	Agent     bool     `json:"agent"`
	Networks  []string `json:"networks"`
	Snapshot  bool     `json:"snapshot"`
	// WritableRoot: runtimes may ask for rootfs writable.
	WritableRoot bool `json:"writable_root"`
}

// Health is the body of GET /health.
type Health struct {
	Status  string `json:"status"`
	Version string `json:"version"`
}

// SandboxLogs is what GET …/sandboxes/{id}/logs answers: the sandbox's
// lifecycle (from its ledger row, and what the server logged about it
// since it last started) and what its agent wrote itself.
type SandboxLogs struct {
	SandboxID         string     `json:"sandbox_id"`
	ProviderSandboxID string     `json:"provider_sandbox_id,omitempty"`
	Lifecycle         []LogEntry `json:"lifecycle"`
	Agent             string     `json:"agent"`
	// AgentError says why there is no agent log (the compute is gone, the
	// provider keeps none).
	AgentError string `json:"agent_error,omitempty"`
}

// LogEntry is one lifecycle record.
type LogEntry struct {
	Time    time.Time         `json:"time"`
	Level   string            `json:"level"`
	Message string            `json:"message"`
	Attrs   map[string]string `json:"attrs,omitempty"`
}

// Provision is one provisioning operation (GET /api/provisions): a start,
// or a restore from an archive, with its steps.
type Provision struct {
	ID         string          `json:"id"`
	RuntimeID  string          `json:"runtime_id"`
	SandboxID  string          `json:"sandbox_id,omitempty"`
	OrgID      string          `json:"org_id"`
	Provider   string          `json:"provider"`
	Kind       string          `json:"kind"`  // start | restore
	Warm       bool            `json:"warm"`  // claimed from the warm pool
	State      string          `json:"state"` // running | succeeded | failed
	StartedAt  time.Time       `json:"started_at"`
	EndedAt    *time.Time      `json:"ended_at,omitempty"`
	DurationMs float64         `json:"duration_ms"` // so far, while running
	Error      string          `json:"error,omitempty"`
	Steps      []ProvisionStep `json:"steps"`
}

// ProvisionStep is one step of a provision.
type ProvisionStep struct {
	Name       string    `json:"name"`
	StartedAt  time.Time `json:"started_at"`
	DurationMs float64   `json:"duration_ms"`
	Error      string    `json:"error,omitempty"`
}

// Readiness is what GET /readyz answers: every check, and when one failed,
// code not_ready and a message naming it.
type Readiness struct {
	Status  string       `json:"status"` // ready | not_ready
	Version string       `json:"version,omitempty"`
	Code    string       `json:"code,omitempty"`
	Message string       `json:"message,omitempty"`
	Checks  []ReadyCheck `json:"checks"`
}

// ReadyCheck is one readiness check.
type ReadyCheck struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// KillAllResult is what POST …/processes/kill-all answers.
type KillAllResult struct {
	Killed int `json:"killed"`
}

// RuntimePatch changes some of a runtime's settings (PATCH on the
// runtime); unset fields stay as they are. The provider and the disk quota
// are fixed when the runtime is created.
type RuntimePatch struct {
	Image               *string       `json:"image,omitempty"`
	CPUMillis           *int64        `json:"cpu_millis,omitempty"`
	MemoryMB            *int64        `json:"memory_mb,omitempty"`
	PidsLimit           *int64        `json:"pids_limit,omitempty"`
	Network             *NetworkPatch `json:"network,omitempty"`
	IdleTimeoutSeconds  *int64        `json:"idle_timeout_seconds,omitempty"`
	MaxLifetimeSeconds  *int64        `json:"max_lifetime_seconds,omitempty"`
	ArchiveAfterSeconds *int64        `json:"archive_after_seconds,omitempty"`
	Secrets             *[]string     `json:"secrets,omitempty"`
	RootFS              *string       `json:"rootfs,omitempty"`
	User                *string       `json:"user,omitempty"`
	// CapabilitiesJSON replaces the sidecar capabilities (applies at the
	// next start).
	CapabilitiesJSON *string `json:"capabilities_json,omitempty"`
}

// NetworkPatch changes a runtime's egress policy: the mode when given, and
// each list given replaces the runtime's (an empty list clears it); a list
// left out stays.
type NetworkPatch struct {
	Mode  string    `json:"mode,omitempty"`
	Allow *[]string `json:"allow,omitempty"`
	Deny  *[]string `json:"deny,omitempty"`
}

// RuntimeUpdate is the answer to a RuntimePatch: the runtime as it is now,
// and which changed settings apply at once (Live: to the current sandbox,
// or there is none) and which when the runtime next starts (NextStart).
type RuntimeUpdate struct {
	Runtime   Runtime  `json:"runtime"`
	Live      []string `json:"live"`
	NextStart []string `json:"next_start"`
}

// EgressDecision is one decision of the egress proxy about a runtime's
// traffic: a request or tunnel, allowed or refused, and what it moved.
type EgressDecision struct {
	ID         string    `json:"id"`
	RuntimeID  string    `json:"runtime_id"`
	SandboxID  string    `json:"sandbox_id"`
	At         time.Time `json:"at"`
	Allowed    bool      `json:"allowed"`
	Reason     string    `json:"reason"`
	Method     string    `json:"method"`
	Host       string    `json:"host"`
	Port       int       `json:"port"`
	Addr       string    `json:"addr,omitempty"`
	BytesUp    int64     `json:"bytes_up"`
	BytesDown  int64     `json:"bytes_down"`
	DurationMS float64   `json:"duration_ms"`
	Brokered   bool      `json:"brokered"`
}

// Secret is a secret's metadata: its value is write-only and never
// answered. WorkspaceID is empty for an org-wide secret.
type Secret struct {
	ID          string    `json:"id"`
	OrgID       string    `json:"org_id"`
	WorkspaceID string    `json:"workspace_id,omitempty"`
	Name        string    `json:"name"`
	Env         string    `json:"env"`
	Brokered    bool      `json:"brokered"`
	Hosts       []string  `json:"hosts,omitempty"`
	Version     int64     `json:"version"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// CreateSecretRequest makes a secret. Env defaults to the name in upper
// case with - and . as _. A brokered secret needs Hosts: the domains
// (api.example.com, *.example.com) the egress proxy may send it to.
type CreateSecretRequest struct {
	Name     string   `json:"name"`
	Value    string   `json:"value"`
	Env      string   `json:"env,omitempty"`
	Brokered bool     `json:"brokered,omitempty"`
	Hosts    []string `json:"hosts,omitempty"`
}

// ReplaceSecretRequest changes a secret; fields left out stay as they
// are.
type ReplaceSecretRequest struct {
	Value    *string   `json:"value,omitempty"`
	Env      string    `json:"env,omitempty"`
	Brokered *bool     `json:"brokered,omitempty"`
	Hosts    *[]string `json:"hosts,omitempty"`
}
