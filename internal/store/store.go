// Package store is the persistence contract of paddock: the records it keeps
// and the Store interface every dialect (SQLite now, PostgreSQL later)
// implements. The conformance suite in storetest runs against each dialect.
//
// Vocabulary:
//
//   - Org: the billing unit. Workspace: a group of projects inside an org.
//     Project: a unit of work; it has exactly one Runtime, created with it.
//   - Runtime: the durable agent environment. It points at zero or one
//     current Sandbox.
//   - Sandbox: one reservation of compute and its ledger row. Rows are never
//     deleted; a finished sandbox is in state killed.
//   - APIKey: a credential; only its SHA-256 hash is stored.
//
// Errors: a missing record is errdefs.ErrNotFound; a uniqueness violation or
// a failed optimistic version check is errdefs.ErrConflict; bad input the
// store itself rejects is errdefs.ErrInvalidArgument. Driver errors never
// escape a Store: anything else is wrapped as an internal error.
//
// Times are UTC and kept to microsecond precision; the zero time means unset.
package store

import (
	"context"
	"time"
)

// Store is the persistence contract.
type Store interface {
	Queries
	// InTx runs fn in one transaction. If fn returns an error the
	// transaction rolls back and InTx returns that error unchanged.
	InTx(ctx context.Context, fn func(q Queries) error) error
	// Close releases the store's resources.
	Close() error
}

// Queries are the operations on records. Every method takes ctx first.
type Queries interface {
	// Meta is a small key/value table for installation facts
	// (installation id, …). GetMeta of a missing key is ErrNotFound.
	GetMeta(ctx context.Context, key string) (string, error)
	SetMeta(ctx context.Context, key, value string) error

	CreateOrg(ctx context.Context, o Org) error
	GetOrg(ctx context.Context, id string) (Org, error)
	GetOrgByName(ctx context.Context, name string) (Org, error)
	ListOrgs(ctx context.Context, page Page) ([]Org, string, error)

	CreateWorkspace(ctx context.Context, w Workspace) error
	GetWorkspace(ctx context.Context, id string) (Workspace, error)
	GetWorkspaceByName(ctx context.Context, orgID, name string) (Workspace, error)
	ListWorkspaces(ctx context.Context, orgID string, page Page) ([]Workspace, string, error)

	CreateProject(ctx context.Context, p Project) error
	GetProject(ctx context.Context, id string) (Project, error)
	GetProjectByName(ctx context.Context, workspaceID, name string) (Project, error)
	ListProjects(ctx context.Context, workspaceID string, page Page) ([]Project, string, error)
	DeleteProject(ctx context.Context, id string) error

	CreateRuntime(ctx context.Context, r Runtime) error
	GetRuntime(ctx context.Context, id string) (Runtime, error)
	GetRuntimeByProject(ctx context.Context, projectID string) (Runtime, error)
	ListRuntimes(ctx context.Context, workspaceID string, page Page) ([]Runtime, string, error)
	// ListRuntimesByStatus lists runtimes in any of statuses across all
	// orgs (for the reconciler), oldest first.
	ListRuntimesByStatus(ctx context.Context, statuses []RuntimeStatus) ([]Runtime, error)
	// UpdateRuntime writes r if the stored version equals r.Version, and
	// increments the version. It returns the stored record. A version
	// mismatch is ErrConflict.
	UpdateRuntime(ctx context.Context, r Runtime) (Runtime, error)
	DeleteRuntime(ctx context.Context, id string) error

	CreateSandbox(ctx context.Context, s Sandbox) error
	GetSandbox(ctx context.Context, id string) (Sandbox, error)
	// GetSandboxByProviderID finds a row of orgID by the provider's own
	// sandbox id, or by a prefix of it at least MinProviderIDPrefix long
	// (as `docker ps` shows ids). A prefix that matches two ids is
	// ErrConflict.
	GetSandboxByProviderID(ctx context.Context, orgID, providerSandboxID string) (Sandbox, error)
	// ListSandboxes returns rows newest first (created_at, then id, both
	// descending) and a cursor for the next page ("" when done).
	ListSandboxes(ctx context.Context, f SandboxFilter, page Page) ([]Sandbox, string, error)
	// UpdateSandbox writes s if the stored version equals s.Version, and
	// increments the version. A version mismatch is ErrConflict.
	UpdateSandbox(ctx context.Context, s Sandbox) (Sandbox, error)

	CreateAPIKey(ctx context.Context, k APIKey) error
	GetAPIKeyByHash(ctx context.Context, hash string) (APIKey, error)
	CountAPIKeys(ctx context.Context) (int, error)
}

// MinProviderIDPrefix is the shortest provider sandbox id prefix
// GetSandboxByProviderID resolves.
const MinProviderIDPrefix = 12

// Page selects one page of a listing. Cursor is opaque and comes from the
// previous call; Limit 0 means DefaultLimit, and it is capped at MaxLimit.
// A malformed cursor is ErrInvalidArgument.
type Page struct {
	Cursor string
	Limit  int
}

const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// EffectiveLimit applies the default and the cap.
func (p Page) EffectiveLimit() int {
	switch {
	case p.Limit <= 0:
		return DefaultLimit
	case p.Limit > MaxLimit:
		return MaxLimit
	}
	return p.Limit
}

// Org is the billing unit.
type Org struct {
	ID        string
	Name      string // unique slug, used in URLs
	CreatedAt time.Time
}

// Workspace groups projects inside an org.
type Workspace struct {
	ID        string
	OrgID     string
	Name      string // slug, unique within the org
	CreatedAt time.Time
}

// Project is a unit of work with exactly one runtime.
type Project struct {
	ID          string
	OrgID       string
	WorkspaceID string
	Name        string // slug, unique within the workspace
	Description string
	CreatedAt   time.Time
}

// RuntimeStatus is a runtime's status.
type RuntimeStatus string

const (
	RuntimeIdle     RuntimeStatus = "idle"     // no sandbox
	RuntimeStarting RuntimeStatus = "starting" // a sandbox is being provisioned
	RuntimeRunning  RuntimeStatus = "running"
	RuntimePaused   RuntimeStatus = "paused"
	RuntimeArchived RuntimeStatus = "archived" // state saved, compute released
	RuntimeError    RuntimeStatus = "error"    // StatusReason says why; reset recovers
)

// RuntimeConfig is a runtime's durable configuration.
type RuntimeConfig struct {
	Image              string `json:"image"`
	Provider           string `json:"provider"`
	CPUMillis          int64  `json:"cpu_millis"`
	MemoryMB           int64  `json:"memory_mb"`
	PidsLimit          int64  `json:"pids_limit"`
	Network            string `json:"network"`
	IdleTimeoutSeconds int64  `json:"idle_timeout_seconds"`
}

// Runtime is the durable agent environment.
type Runtime struct {
	ID               string
	OrgID            string
	WorkspaceID      string
	ProjectID        string
	Status           RuntimeStatus
	StatusReason     string // why the runtime is in error; "" otherwise
	Config           RuntimeConfig
	CurrentSandboxID string // "" when the runtime has no sandbox
	WorkspaceVolume  string // provider volume name holding /workspace
	Version          int64  // optimistic concurrency; set by the store
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// SandboxKind says why compute exists.
type SandboxKind string

const (
	KindRuntime SandboxKind = "runtime"
	KindTask    SandboxKind = "task"
	KindWorld   SandboxKind = "world"
)

// SandboxState is a ledger row's state. starting precedes running while the
// provider provisions; killed is final.
type SandboxState string

const (
	SandboxStarting SandboxState = "starting"
	SandboxRunning  SandboxState = "running"
	SandboxPaused   SandboxState = "paused"
	SandboxKilled   SandboxState = "killed"
)

// PauseReason says why a sandbox is paused.
type PauseReason string

const (
	PauseNone                PauseReason = ""
	PauseUser                PauseReason = "user"
	PauseTimeout             PauseReason = "timeout"
	PauseInsufficientCredits PauseReason = "insufficient_credits"
	PauseMemberLimitExceeded PauseReason = "member_limit_exceeded"
)

// Sandbox is one ledger row.
type Sandbox struct {
	ID                string
	OrgID             string
	WorkspaceID       string // "" for compute outside a workspace
	ProjectID         string
	RuntimeID         string
	Kind              SandboxKind
	State             SandboxState
	PauseReason       PauseReason
	Provider          string
	ProviderSandboxID string // "" until the provider created the compute
	ProviderState     []byte // opaque provider.Handle.State
	Image             string
	CPUMillis         int64
	MemoryMB          int64
	SecretIDs         []string
	KillReason        string // why it was killed ("deleted", "reset", "provision_failed", …)
	Error             string // human-readable failure detail, if any
	BilledMicros      int64  // credits already deducted, in millionths of a credit
	CreatedAt         time.Time
	StartedAt         time.Time
	PausedAt          time.Time
	KilledAt          time.Time
	ExpiresAt         time.Time
	LastSettledAt     time.Time // billing watermark
	Version           int64
	UpdatedAt         time.Time
}

// SandboxFilter narrows ListSandboxes. Empty fields match everything.
type SandboxFilter struct {
	OrgID     string // required
	Kind      SandboxKind
	State     SandboxState
	Provider  string
	RuntimeID string
}

// APIKey is a credential. The plaintext is shown once at creation.
type APIKey struct {
	ID        string
	Name      string
	Hash      string // hex SHA-256 of the plaintext key
	Prefix    string // first characters of the plaintext, for display
	Role      string // "admin" for now; scoped roles come later
	OrgID     string // "" for an installation-wide key
	CreatedAt time.Time
}
