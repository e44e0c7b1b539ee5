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
	"encoding/json"
	"errors"
	"time"
)

// ErrStale is in the chain of every error a failed optimistic version
// check returns (kind errdefs.ErrConflict): the record changed since it was
// read, so the caller lost a race. Callers tell it apart from other
// conflicts with errors.Is and give it their own public face.
var ErrStale = errors.New("stale version")

// Store is the persistence contract.
type Store interface {
	Queries
	Transactor
	// Check reports whether the store answers and its schema is the one
	// this build expects (for readiness probes): nil, or an error that
	// says which.
	Check(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// Transactor runs work in one transaction. A consumer that writes several
// records at once embeds it in the interface it declares.
type Transactor interface {
	// InTx runs fn in one transaction. If fn returns an error the
	// transaction rolls back and InTx returns that error unchanged.
	InTx(ctx context.Context, fn func(q Queries) error) error
}

// Queries are the operations on records: the union of the domains'
// interfaces below. Every method takes ctx first. A dialect implements all
// of it; a consumer declares, next to itself, a small interface listing the
// methods it calls, and is handed the Store in its place.
type Queries interface {
	TenancyQueries
	IdentityQueries // users, members, keys, sign-ins, invitations, SSH keys: identity.go
	RuntimeQueries
	SandboxQueries
	CreditQueries // credits and seats: see the section at the end of this file
	CapabilityQueries
	SessionQueries // capability.go
	EgressQueries
	SecretQueries
	WarmQueries          // see the section at the end of this file
	LeaseQueries         // lease.go
	LiveQueries          // buckets and caps replicas share: live.go
	E2BQueries           // the E2B-compatible surface's sandboxes: e2b.go
	TemplateQueries      // runtime templates: template.go
	TaskQueries          // evaluation runs: task.go
	SnapshotQueries      // snapshots taken on request: snapshot.go
	WorkflowQueries      // workflows and their runs: workflow.go
	TemplateBuildQueries // template builds and org images: templatebuild.go
	WorldQueries         // sets of sandboxes on one network: world.go
	HostQueries          // machines orgs brought: host.go
}

// TenancyQueries are the operations on the installation's facts and on
// orgs, workspaces and projects.
type TenancyQueries interface {
	// Meta is a small key/value table for installation facts
	// (installation id, …). GetMeta of a missing key is ErrNotFound.
	GetMeta(ctx context.Context, key string) (string, error)
	SetMeta(ctx context.Context, key, value string) error
	// InitMeta stores value under key unless the key has one already, and
	// returns the value stored: of servers starting together, each gets
	// the one value the first wrote (an installation's id, a key it
	// generates once).
	InitMeta(ctx context.Context, key, value string) (string, error)

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
}

// RuntimeQueries are the operations on runtime rows.
type RuntimeQueries interface {
	CreateRuntime(ctx context.Context, r Runtime) error
	GetRuntime(ctx context.Context, id string) (Runtime, error)
	GetRuntimeByProject(ctx context.Context, projectID string) (Runtime, error)
	// FindRuntimesByIDPrefix returns at most limit runtimes whose id
	// starts with prefix (a short id, as preview hosts and SSH users name
	// a runtime).
	FindRuntimesByIDPrefix(ctx context.Context, prefix string, limit int) ([]Runtime, error)
	ListRuntimes(ctx context.Context, workspaceID string, page Page) ([]Runtime, string, error)
	// ListRuntimesByStatus lists runtimes in any of statuses across all
	// orgs (for the reconciler), oldest first.
	ListRuntimesByStatus(ctx context.Context, statuses []RuntimeStatus) ([]Runtime, error)
	DeleteRuntime(ctx context.Context, id string) error

	// Runtime verbs. A runtime row is changed only by these, each of
	// which writes one group of its columns and nothing else (never its
	// identity, created_at or another group), so a configuration change
	// and a lifecycle transition never undo each other. Each:
	//
	//   - writes only if the stored version is version; else nothing is
	//     written and the error is ErrConflict with ErrStale in its chain;
	//   - sets updated_at to at (the zero time: now), increments the
	//     version by exactly one and returns the stored row;
	//   - answers ErrNotFound for an id no row has and ErrInvalidArgument
	//     for an empty id, writing nothing.

	// SetRuntimeState writes a status transition: the lifecycle columns
	// status, status_reason and current_sandbox_id, together, as st has
	// them ("" clears a reason or the current sandbox). An empty status
	// is ErrInvalidArgument.
	SetRuntimeState(ctx context.Context, id string, version int64, st RuntimeState, at time.Time) (Runtime, error)
	// SetRuntimeConfig writes the configuration (config), whole: public
	// ports, settings and bindings are one column.
	SetRuntimeConfig(ctx context.Context, id string, version int64, c RuntimeConfig, at time.Time) (Runtime, error)
	// SetRuntimeSnapshot writes the snapshot reference (snapshot; ""
	// forgets it).
	SetRuntimeSnapshot(ctx context.Context, id string, version int64, ref string, at time.Time) (Runtime, error)
	// SetRuntimeWorkspaceVolume writes the workspace volume's name
	// (workspace_volume).
	SetRuntimeWorkspaceVolume(ctx context.Context, id string, version int64, volume string, at time.Time) (Runtime, error)
}

// SandboxQueries are the operations on ledger rows' lifecycle (their
// billing is CreditQueries').
type SandboxQueries interface {
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

	// CountSandboxes counts the rows that are not killed, by provider and
	// state, for metrics.
	CountSandboxes(ctx context.Context) ([]SandboxCount, error)

	// Sandbox verbs. Each says what changes in a ledger row and touches
	// nothing else: never the billing columns (BilledMicros, LastSettledAt),
	// which only settlements move under their own BillingVersion. Each
	// writes only if the stored version is version (else ErrConflict),
	// increments it and returns the stored row.

	// RecordSandboxProvider records the provider's id and recovery state
	// for the row's compute once it was created.
	RecordSandboxProvider(ctx context.Context, id string, version int64, providerID string, state []byte, at time.Time) (Sandbox, error)
	// MarkSandboxRunning records that the row's compute runs from at (a
	// start or a resume): it is running, not paused, its running window
	// starts at at (StartedAt too, on its first start) and it expires at
	// expires (zero: never).
	MarkSandboxRunning(ctx context.Context, id string, version int64, at, expires time.Time) (Sandbox, error)
	// MarkSandboxPaused records that the row's compute was paused at at,
	// and why.
	MarkSandboxPaused(ctx context.Context, id string, version int64, reason PauseReason, at time.Time) (Sandbox, error)
	// KillSandbox records that the row's compute is gone for good: killed
	// at at, for reason, with detail (a failure's message; "" keeps the
	// row's).
	KillSandbox(ctx context.Context, id string, version int64, reason, detail string, at time.Time) (Sandbox, error)
	// ExtendSandboxExpiry moves a running row's expiry later to expires;
	// an earlier one, or a row that is not running, is left alone and
	// reports false. It is activity, not a transition: it needs no version
	// and does not increment it.
	ExtendSandboxExpiry(ctx context.Context, id string, expires time.Time) (bool, error)
	// SetSandboxExpiry sets a running row's expiry to expires, earlier or
	// later (a timeout set anew); a row that is not running is left alone
	// and reports false. Like ExtendSandboxExpiry it needs no version.
	SetSandboxExpiry(ctx context.Context, id string, expires time.Time) (bool, error)
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
	Image     string `json:"image"`
	Provider  string `json:"provider"`
	CPUMillis int64  `json:"cpu_millis"`
	MemoryMB  int64  `json:"memory_mb"`
	PidsLimit int64  `json:"pids_limit"`
	// DiskMB is the workspace's disk quota, fixed when the workspace is
	// first created. 0 (runtimes made before quotas) means the provider's
	// default.
	DiskMB int64 `json:"disk_mb,omitempty"`
	// Network is the runtime's egress policy.
	Network            NetworkConfig `json:"network"`
	IdleTimeoutSeconds int64         `json:"idle_timeout_seconds"`
	// MaxLifetimeSeconds, when set, bounds how long a sandbox runs
	// without a pause: activity and keepalive never extend its expiry
	// past RunningSince plus this. 0 means no bound.
	MaxLifetimeSeconds int64 `json:"max_lifetime_seconds,omitempty"`
	// ArchiveAfterSeconds is how long the runtime may stay paused before
	// it is archived. 0 means the installation's default.
	ArchiveAfterSeconds int64 `json:"archive_after_seconds,omitempty"`
	// Secrets are bound to the runtime, by id or name: injected into every
	// sandbox it starts.
	Secrets []string `json:"secrets,omitempty"`
	// RootFS is "readonly" (the default) or "writable": a writable root
	// lets apt-get install, with the few capabilities that needs.
	RootFS string `json:"rootfs,omitempty"`
	// User is the account the sandbox's processes run as unless a call
	// names another: "user" (uid 1000; new runtimes' default) or "root".
	User string `json:"user,omitempty"`
	// Sidecars are the sidecar capabilities the runtime asked for
	// (capabilities_json), sorted; they choose its image and reach the
	// sandbox as SIDECAR_CAPABILITIES.
	Sidecars []string `json:"sidecars,omitempty"`
	// PublicPorts are the sandbox ports whose preview URLs need no key
	// or token, sorted.
	PublicPorts []int `json:"public_ports,omitempty"`
	// Ports are the ports the runtime declares, sorted: each one's
	// preview URL reaches its sandboxes' environment, and one marked
	// Public joins PublicPorts once something listens on it.
	Ports []DeclaredPort `json:"ports,omitempty"`
	// Env is the default environment of every process in the runtime's
	// sandboxes (the E2B-compatible surface's envVars), fixed when the
	// runtime is created; a call's own environment overrides it.
	Env map[string]string `json:"env,omitempty"`
	// Harness is the agent harness a prompt runs when it names none and
	// continues no session ("": the installation's default).
	Harness string `json:"harness,omitempty"`
	// Model is the model a prompt's harness is given when the prompt
	// names none ("": the harness's own default).
	Model string `json:"model,omitempty"`
}

// DeclaredPort is a port a runtime declares (RuntimeConfig.Ports).
type DeclaredPort struct {
	Port int `json:"port"`
	// Public makes the port public once something listens on it.
	Public bool `json:"public,omitempty"`
}

// Root filesystem modes of a runtime.
const (
	RootFSReadOnly = "readonly"
	RootFSWritable = "writable"
)

// RootFSMode is c's root filesystem mode; runtimes stored before the
// setting existed have none and are read-only.
func (c RuntimeConfig) RootFSMode() string {
	if c.RootFS == "" {
		return RootFSReadOnly
	}
	return c.RootFS
}

// Accounts a runtime's processes run as.
const (
	UserDefault = "user"
	UserRoot    = "root"
)

// UserName is the account c's processes run as; runtimes stored before
// the setting existed have none and run as root, as they did, so that
// their workspaces' files stay theirs.
func (c RuntimeConfig) UserName() string {
	if c.User == "" {
		return UserRoot
	}
	return c.User
}

// NetworkConfig is a runtime's egress policy: Mode is none, proxy or open;
// Allow and Deny are rules (a domain pattern, host:port or a CIDR) the
// egress proxy applies in proxy mode, deny winning.
type NetworkConfig struct {
	Mode  string   `json:"mode"`
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// UnmarshalJSON also reads the plain string ("none", "proxy", "open") that
// runtimes stored before the policy became an object.
func (n *NetworkConfig) UnmarshalJSON(b []byte) error {
	var mode string
	if err := json.Unmarshal(b, &mode); err == nil {
		*n = NetworkConfig{Mode: mode}
		return nil
	}
	type plain NetworkConfig
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*n = NetworkConfig(p)
	return nil
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
	// Snapshot is the provider's reference to the saved filesystem of
	// the runtime's last archived sandbox ("" when there is none). The
	// next start of an archived runtime creates its sandbox from it.
	Snapshot  string
	Version   int64 // optimistic concurrency; set by the store
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RuntimeState is the lifecycle part of a runtime row: what one status
// transition writes at once (SetRuntimeState).
type RuntimeState struct {
	Status           RuntimeStatus
	StatusReason     string
	CurrentSandboxID string
}

// State is r's lifecycle state.
func (r Runtime) State() RuntimeState {
	return RuntimeState{Status: r.Status, StatusReason: r.StatusReason, CurrentSandboxID: r.CurrentSandboxID}
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
	Network           string // the network mode it was provisioned with: none, proxy or open
	KillReason        string // why it was killed ("deleted", "reset", "provision_failed", …)
	Error             string // human-readable failure detail, if any
	BilledMicros      int64  // credits already deducted, in millionths of a credit
	CreatedAt         time.Time
	StartedAt         time.Time
	RunningSince      time.Time // last start or resume; bounds a max lifetime
	PausedAt          time.Time
	KilledAt          time.Time
	ExpiresAt         time.Time
	LastSettledAt     time.Time // billing watermark
	Version           int64     // lifecycle transitions (the verbs)
	BillingVersion    int64     // settlements, which move BilledMicros and LastSettledAt
	UpdatedAt         time.Time
}

// SandboxCount is how many live rows one provider has in one state.
type SandboxCount struct {
	Provider string
	State    SandboxState
	Count    int
}

// SandboxFilter narrows ListSandboxes. Empty fields match everything.
type SandboxFilter struct {
	OrgID string // required
	// Workspaces, when not nil, keeps only rows of these workspaces (an
	// empty, non-nil slice matches none).
	Workspaces []string
	Kind       SandboxKind
	State      SandboxState
	Provider   string
	RuntimeID  string
}

// APIKey is a credential. The plaintext is shown once at creation.
type APIKey struct {
	ID     string
	Name   string
	Hash   string // hex SHA-256 of the plaintext key
	Prefix string // first characters of the plaintext, for display
	// Role is owner, admin, member or viewer; an installation-wide key's
	// is admin.
	Role        string
	OrgID       string // "" for an installation-wide key
	UserID      string // the holder; "" for installation-wide keys
	WorkspaceID string // the one workspace it is narrowed to; "" for all
	// CreatedBy names the credential that made it ("key:<id>",
	// "session:<id>"; "" when the server made it).
	CreatedBy string
	// MakerUserID is the user who made the key for its holder (an admin),
	// or made the key it was made with; "" when the holder made it, or
	// the installation admin did.
	MakerUserID string
	CreatedAt   time.Time
	ExpiresAt   time.Time // zero: never
	RevokedAt   time.Time // zero: not revoked
}

// ---------------------------------------------------------------------------
// Credits and seats
//
// Vocabulary:
//
//   - Amounts are integers in micro-credits (millionths of a credit).
//   - CreditAccount: an org's balance and the part of it that is held for
//     compute being provisioned or resumed. Available = balance − held. An
//     org that never had a movement has a zero account. Neither the balance
//     nor the held amount ever goes below zero.
//   - JournalEntry: one credit movement, append-only. Grants and
//     adjustments come from an admin; holds and releases reserve and free
//     credits around a start or resume; deductions charge compute and
//     refunds return compute that was paid for but did not run. Every entry
//     carries an idempotency key unique per org: posting a key again is
//     ErrConflict (code idempotency_key_reused), so a retried request can
//     never move money twice.
//   - Settlement: a deduction or a refund for one sandbox's compute up to a
//     time. The balance, the row's BilledMicros and LastSettledAt (the
//     billing watermark), and the journal change in one transaction.
//   - WorkspaceMember: a member of a workspace. A workspace's member limit
//     (0 = none) caps how many members may use its compute.
// ---------------------------------------------------------------------------

// CreditQueries are the operations on credits and seats. Each method is
// atomic on its own: called outside InTx it runs in its own transaction,
// inside InTx it joins the caller's.
type CreditQueries interface {
	// GetCreditAccount returns orgID's account. An unknown org is
	// ErrNotFound.
	GetCreditAccount(ctx context.Context, orgID string) (CreditAccount, error)
	// PostCredit records a movement that is not a charge for compute:
	//   - EntryGrant adds AmountMicros (> 0) to the balance;
	//   - EntryAdjustment sets the balance to AmountMicros (≥ 0);
	//   - EntryHold reserves AmountMicros (> 0) of the available credits,
	//     or fails with ErrPaymentRequired (code insufficient_credits)
	//     when fewer are available;
	//   - EntryRelease frees up to AmountMicros (> 0) of the held credits.
	// It returns the entry as stored. A key already used in the org is
	// ErrConflict (idempotency_key_reused) and changes nothing.
	PostCredit(ctx context.Context, p CreditPosting) (JournalEntry, error)
	// Settle charges (AmountMicros > 0, a deduction) or refunds
	// (AmountMicros < 0) one sandbox's compute and moves the row's
	// watermark from s.From to s.UpTo. A deduction takes at most the
	// balance and records the rest as ShortfallMicros; a refund returns at
	// most what the row was billed. ReleaseHeldMicros of held credits are
	// freed with it (capturing a hold). A row whose watermark is not
	// s.From is ErrConflict (code settlement_stale) and changes nothing,
	// so a settlement can never be applied twice.
	Settle(ctx context.Context, s Settlement) (JournalEntry, error)
	// SettleMany applies settlements of orgID's rows in order, each
	// exactly as Settle would after the ones before it, in far fewer
	// statements (the settler's path). entries[i] is the i-th settlement's
	// entry; or errs[i] is the error Settle would have returned for it,
	// and then it changed nothing and the rest still apply. A settlement
	// of another org is ErrInvalidArgument there. Any other failure is
	// err: called alone nothing was applied; inside InTx the caller must
	// roll back, as after any failed write.
	SettleMany(ctx context.Context, orgID string, ss []Settlement) (entries []JournalEntry, errs []error, err error)
	// GetJournalEntryByKey returns orgID's entry with the idempotency key.
	GetJournalEntryByKey(ctx context.Context, orgID, key string) (JournalEntry, error)
	// ListJournal returns entries newest first (by Seq) and a cursor for
	// the next page ("" when done).
	ListJournal(ctx context.Context, f JournalFilter, page Page) ([]JournalEntry, string, error)
	// ListOpenHolds lists orgID's holds still reserving credits, newest
	// first, and a cursor for the next page: the meter keys a hold
	// hold:S, and the charge (charge:S) or release (release:S) that closes
	// it shares the suffix S; a hold with neither is open.
	ListOpenHolds(ctx context.Context, orgID string, page Page) ([]JournalEntry, string, error)
	// SumUsage sums the deductions and refunds of an org over a time range,
	// grouped as q.GroupBy says, largest net charge first; with q.Daily,
	// per UTC day as well, earliest day first (UsageRow.Day).
	SumUsage(ctx context.Context, q UsageQuery) ([]UsageRow, error)
	// ListRunningSandboxes lists running rows of every org, by id, after
	// afterID ("" for the first page), at most limit (capped at MaxLimit
	// times ten). It is the settler's scan, so each row carries only what
	// billing reads: ID, OrgID, WorkspaceID, ProjectID, RuntimeID, Kind,
	// State, Provider, CPUMillis, MemoryMB, BilledMicros, StartedAt,
	// RunningSince, LastSettledAt and BillingVersion; the other fields are
	// zero (GetSandbox reads a whole row).
	ListRunningSandboxes(ctx context.Context, afterID string, limit int) ([]Sandbox, error)

	// AddWorkspaceMember adds a user to a workspace; a member already in the workspace
	// is ErrConflict (member_exists).
	AddWorkspaceMember(ctx context.Context, m WorkspaceMember) error
	// RemoveWorkspaceMember removes a member; an unknown one is
	// ErrNotFound.
	RemoveWorkspaceMember(ctx context.Context, workspaceID, userID string) error
	// ListWorkspaceMembers lists members in the order they were added.
	ListWorkspaceMembers(ctx context.Context, workspaceID string, page Page) ([]WorkspaceMember, string, error)
	// GetWorkspaceSeats returns a workspace's member limit and count.
	GetWorkspaceSeats(ctx context.Context, workspaceID string) (WorkspaceSeats, error)
	// SetWorkspaceMemberLimit sets a workspace's member limit (0 = none;
	// negative is ErrInvalidArgument).
	SetWorkspaceMemberLimit(ctx context.Context, workspaceID string, limit int) error
	// ListWorkspacesOverMemberLimit lists the workspaces of every org whose
	// members exceed their limit.
	ListWorkspacesOverMemberLimit(ctx context.Context) ([]WorkspaceSeats, error)
}

// CreditAccount is an org's credit balance.
type CreditAccount struct {
	OrgID         string
	BalanceMicros int64     // credits owned
	HeldMicros    int64     // part of the balance reserved by holds
	UpdatedAt     time.Time // zero when the org never had a movement
}

// AvailableMicros is what a new hold may reserve.
func (a CreditAccount) AvailableMicros() int64 { return max(0, a.BalanceMicros-a.HeldMicros) }

// EntryKind is the kind of a credit movement.
type EntryKind string

const (
	EntryGrant      EntryKind = "grant"      // credits added by an admin
	EntryAdjustment EntryKind = "adjustment" // balance set by an admin
	EntryHold       EntryKind = "hold"       // credits reserved for a start or resume
	EntryRelease    EntryKind = "release"    // a hold freed: the compute never ran
	EntryDeduction  EntryKind = "deduction"  // compute charged
	EntryRefund     EntryKind = "refund"     // prepaid compute that did not run, returned
)

// EntryKinds lists every kind.
var EntryKinds = []EntryKind{EntryGrant, EntryAdjustment, EntryHold, EntryRelease, EntryDeduction, EntryRefund}

// JournalEntry is one credit movement. It is never changed or deleted.
type JournalEntry struct {
	ID                 string
	Seq                int64 // order of entries, set by the store
	OrgID              string
	Kind               EntryKind
	AmountMicros       int64 // change to the balance (negative for a deduction)
	HeldMicros         int64 // change to the held amount
	BalanceAfterMicros int64
	HeldAfterMicros    int64
	ShortfallMicros    int64 // what a deduction could not take from the balance
	SandboxID          string
	RuntimeID          string
	ProjectID          string
	WorkspaceID        string
	PeriodStart        time.Time // the compute a settlement covers; zero otherwise
	PeriodEnd          time.Time
	IdempotencyKey     string
	Note               string
	Actor              string // the API key that moved the credits; "" for the system
	CreatedAt          time.Time
}

// CreditPosting is a grant, an adjustment, a hold or a release.
type CreditPosting struct {
	ID             string // "" = the store assigns one
	OrgID          string
	Kind           EntryKind
	AmountMicros   int64
	SandboxID      string // the compute a hold or release is for
	RuntimeID      string
	ProjectID      string
	WorkspaceID    string
	IdempotencyKey string
	Note           string
	Actor          string
	At             time.Time // zero = now
}

// Settlement is a charge or a refund of one sandbox's compute.
type Settlement struct {
	ID        string // "" = the store assigns one
	OrgID     string
	SandboxID string
	From      time.Time // the row's current watermark (zero when unset)
	// Since is where the charged period begins when it is not From: a
	// sandbox's unbilled time starts when it last began running, if that
	// is after its watermark.
	Since             time.Time
	UpTo              time.Time // the new watermark
	AmountMicros      int64     // > 0 charges, < 0 refunds
	ReleaseHeldMicros int64     // held credits freed with this entry (≥ 0)
	IdempotencyKey    string
	Note              string
	At                time.Time // zero = now
}

// JournalFilter narrows ListJournal. Empty fields match everything; the
// time range is [From, To) on CreatedAt.
type JournalFilter struct {
	OrgID       string // required
	SandboxID   string
	RuntimeID   string
	ProjectID   string
	WorkspaceID string
	Kind        EntryKind
	From        time.Time
	To          time.Time
}

// UsageGroup says how SumUsage groups.
type UsageGroup string

const (
	UsageBySandbox   UsageGroup = "sandbox"
	UsageByRuntime   UsageGroup = "runtime"
	UsageByProject   UsageGroup = "project"
	UsageByWorkspace UsageGroup = "workspace"
	UsageByOrg       UsageGroup = "org"
)

// UsageQuery selects usage: an org's deductions and refunds created in
// [From, To) (zero bounds are open).
type UsageQuery struct {
	OrgID   string // required
	GroupBy UsageGroup
	From    time.Time
	To      time.Time
	Daily   bool // one row per group and UTC day
}

// UsageRow is the usage of one group.
type UsageRow struct {
	Key             string    // the sandbox, runtime, project, workspace or org id
	Day             time.Time // the UTC day's midnight with UsageQuery.Daily; zero otherwise
	ChargedMicros   int64     // deducted
	RefundedMicros  int64     // refunded
	ShortfallMicros int64     // run but not paid for
	Entries         int64
}

// NetMicros is what the group cost.
func (r UsageRow) NetMicros() int64 { return r.ChargedMicros - r.RefundedMicros }

// WorkspaceMember is a user's membership of a workspace. Listings fill
// User.
type WorkspaceMember struct {
	ID          string
	OrgID       string
	WorkspaceID string
	UserID      string
	CreatedAt   time.Time
	User        User
}

// WorkspaceSeats is a workspace's member limit and count.
type WorkspaceSeats struct {
	WorkspaceID string
	OrgID       string
	MemberLimit int // 0 = no limit
	Members     int
}

// OverLimit reports whether the members exceed the limit.
func (s WorkspaceSeats) OverLimit() bool { return s.MemberLimit > 0 && s.Members > s.MemberLimit }

// ---------------------------------------------------------------------------
// Warm pool
//
// A WarmSandbox is compute provisioned ahead of demand for one template
// (provider, image, resources, network), with its own fresh workspace
// volume. It belongs to no org and is not in the ledger: nobody is billed
// for it. A start claims one: the claim deletes the warm row in the same
// transaction that writes the ledger row, whose id is the warm row's id
// (the compute's labels already name it), so one warm sandbox can never be
// handed to two runtimes.
// ---------------------------------------------------------------------------

// WarmState is a warm sandbox's state.
type WarmState string

const (
	WarmCreating WarmState = "creating" // the provider is provisioning it
	WarmReady    WarmState = "ready"    // provisioned, can be claimed
)

// WarmSandbox is one pre-provisioned sandbox.
type WarmSandbox struct {
	ID                string // becomes the ledger row id when claimed
	Template          string // the template key it was made for
	State             WarmState
	Provider          string
	ProviderSandboxID string
	ProviderState     []byte
	Image             string
	CPUMillis         int64
	MemoryMB          int64
	WorkspaceVolume   string
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// WarmQueries are the operations on the warm pool.
type WarmQueries interface {
	CreateWarmSandbox(ctx context.Context, w WarmSandbox) error
	GetWarmSandbox(ctx context.Context, id string) (WarmSandbox, error)
	// UpdateWarmSandbox writes w's state and provider fields.
	UpdateWarmSandbox(ctx context.Context, w WarmSandbox) error
	// ListWarmSandboxes lists every warm sandbox, oldest first.
	ListWarmSandboxes(ctx context.Context) ([]WarmSandbox, error)
	// ClaimWarmSandbox deletes and returns the oldest ready warm sandbox
	// of template. None is ErrNotFound. Two concurrent claims never
	// return the same one.
	ClaimWarmSandbox(ctx context.Context, template string) (WarmSandbox, error)
	DeleteWarmSandbox(ctx context.Context, id string) error
}

// EgressDecision is one decision of the egress proxy: a request or tunnel
// from a sandbox, allowed or refused, with what it moved.
type EgressDecision struct {
	ID          string
	OrgID       string
	WorkspaceID string
	RuntimeID   string
	SandboxID   string
	At          time.Time // when the request ended
	Allowed     bool
	Reason      string // why, for people: "allowed by rule pypi.org", "no allow rule matches"
	// Refusal is the kind of a decision that let nothing through, for
	// code (egress.Refusal: not_allowed, denied, unresolved, …); "" when
	// allowed.
	Refusal   string
	Method    string // CONNECT, or the HTTP method of a proxied request
	Host      string
	Port      int
	Addr      string // the address dialed; "" when refused before dialing
	BytesUp   int64  // from the sandbox
	BytesDown int64  // to the sandbox
	Duration  time.Duration
	Brokered  bool // a brokered secret was added to it
}

// EgressQuery selects one sandbox's decisions about some hosts on one
// port, later in the log than a decision already read.
type EgressQuery struct {
	SandboxID string
	Hosts     []string
	Port      int
	// AfterAt and AfterID: only decisions after this one (by At, then
	// ID); a zero AfterAt selects from the start.
	AfterAt time.Time
	AfterID string
	// Limit bounds the rows returned; 0 or more than MaxLimit is MaxLimit.
	Limit int
}

// EgressQueries keep the egress proxy's decisions.
type EgressQueries interface {
	// RecordEgress inserts decisions in one statement batch.
	RecordEgress(ctx context.Context, ds []EgressDecision) error
	// ListEgress returns a runtime's decisions newest first.
	ListEgress(ctx context.Context, runtimeID string, page Page) ([]EgressDecision, string, error)
	// SandboxEgress returns the decisions q selects, oldest first.
	SandboxEgress(ctx context.Context, q EgressQuery) ([]EgressDecision, error)
	// PruneEgress deletes decisions older than before and returns how many.
	PruneEgress(ctx context.Context, before time.Time) (int64, error)
}

// Secret is a named value of an org or of one of its workspaces, kept
// sealed: the store never sees the value, only what the secrets keyring
// made of it.
type Secret struct {
	ID          string
	OrgID       string
	WorkspaceID string // "" for an org-wide secret
	Name        string // unique within its org or workspace
	Env         string // the environment variable it is injected as
	// Brokered secrets never enter a sandbox: it sees a placeholder, and
	// the egress proxy puts the value into requests to Hosts.
	Brokered  bool
	Hosts     []string
	KeyID     string // names the key that sealed the value
	Sealed    []byte // nonce and AES-GCM ciphertext
	Version   int64  // optimistic concurrency; set by the store
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SecretQueries keep secrets.
type SecretQueries interface {
	// CreateSecret inserts s; its name is unique within its scope (the
	// org's own secrets, or one workspace's).
	CreateSecret(ctx context.Context, s Secret) error
	GetSecret(ctx context.Context, id string) (Secret, error)
	// GetSecretByName returns the secret named name in exactly that scope
	// (workspaceID "" is the org's own).
	GetSecretByName(ctx context.Context, orgID, workspaceID, name string) (Secret, error)
	// ListSecrets lists one scope's secrets in creation order.
	ListSecrets(ctx context.Context, orgID, workspaceID string, page Page) ([]Secret, string, error)
	// AllSecrets returns every secret of the installation (key rotation).
	AllSecrets(ctx context.Context) ([]Secret, error)
	// UpdateSecret writes s's env, brokering, hosts and sealed value if
	// its version is current, and returns the stored secret.
	UpdateSecret(ctx context.Context, s Secret) (Secret, error)
	DeleteSecret(ctx context.Context, id string) error
}
