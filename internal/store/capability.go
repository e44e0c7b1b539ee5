package store

import (
	"context"
	"time"
)

// CapabilityVersion is one version of a capability bundle in an org's
// inventory. The store keeps the bundle as given (the canonical tar.gz the
// capability package makes) and a summary of what it ships; it never reads
// either.
type CapabilityVersion struct {
	ID          string
	OrgID       string
	Name        string
	Version     string
	Description string
	Digest      string // sha256 of Bundle
	Contents    []byte // JSON summary of what it ships (binding.Contents, versioned)
	Bundle      []byte // empty in listings
	SizeBytes   int64
	CreatedAt   time.Time
}

// CapabilityBinding attaches a capability version to a runtime. It lives
// with the runtime: its sandboxes come and go, the binding stays.
type CapabilityBinding struct {
	ID        string
	OrgID     string
	RuntimeID string
	Source    string // catalog or inventory
	Name      string // unique within the runtime
	Version   string
	Enabled   bool
	Flags     map[string]bool
	// Status is what happened when the binding was last applied to a
	// sandbox (JSON in the binding service's versioned shape).
	Status    []byte
	Rev       int64 // optimistic concurrency; set by the store
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CapabilityQueries keep inventories and bindings.
type CapabilityQueries interface {
	// CreateCapabilityVersion inserts v; name and version are unique in
	// the org (a second one is ErrConflict).
	CreateCapabilityVersion(ctx context.Context, v CapabilityVersion) error
	// GetCapabilityVersion returns one version with its bundle.
	GetCapabilityVersion(ctx context.Context, orgID, name, version string) (CapabilityVersion, error)
	// ListCapabilityVersions lists the org's versions (of name, when not
	// empty) by name then creation, without their bundles.
	ListCapabilityVersions(ctx context.Context, orgID, name string) ([]CapabilityVersion, error)
	DeleteCapabilityVersion(ctx context.Context, orgID, name, version string) error

	// CreateBinding inserts b at revision 1; a runtime binds a name once.
	CreateBinding(ctx context.Context, b CapabilityBinding) error
	GetBinding(ctx context.Context, id string) (CapabilityBinding, error)
	// ListBindings lists a runtime's bindings in install order.
	ListBindings(ctx context.Context, runtimeID string) ([]CapabilityBinding, error)
	// UpdateBinding writes b's version, enabled and flags if its revision
	// is current, and returns the stored binding.
	UpdateBinding(ctx context.Context, b CapabilityBinding) (CapabilityBinding, error)
	// SetBindingStatus records what applying the binding did; it is an
	// observation, so it needs no revision.
	SetBindingStatus(ctx context.Context, id string, status []byte, at time.Time) error
	// ReplaceBindingStatus writes status only if the stored one is still
	// from, and reports whether it did (a reader's refresh must not undo
	// a newer apply).
	ReplaceBindingStatus(ctx context.Context, id string, from, to []byte) (bool, error)
	DeleteBinding(ctx context.Context, id string) error
	// CountInventoryBindings counts the bindings in the org that pin an
	// inventory version.
	CountInventoryBindings(ctx context.Context, orgID, name, version string) (int, error)
}

// Session is an agent conversation on a runtime: prompts, tasks and their
// transcripts. It references the runtime, never a sandbox.
type Session struct {
	ID          string
	OrgID       string
	WorkspaceID string
	RuntimeID   string
	Kind        string // prompt or task
	Harness     string
	// HarnessSessionID is the harness's own conversation id, which the
	// next prompt resumes.
	HarnessSessionID string
	Status           string // running, completed, failed
	Title            string
	Turns            int
	Events           int64 // the last event's sequence number
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// SessionEvent is one event of a session's transcript: the common event
// schema as JSON (in the session service's versioned shape), with its
// place.
type SessionEvent struct {
	SessionID string
	Seq       int64
	Turn      int
	Type      string
	At        time.Time
	Body      []byte // JSON
}

// SessionQueries keep sessions and their transcripts.
type SessionQueries interface {
	CreateSession(ctx context.Context, s Session) error
	GetSession(ctx context.Context, id string) (Session, error)
	// ListSessions lists a runtime's sessions, newest first.
	ListSessions(ctx context.Context, runtimeID string, page Page) ([]Session, string, error)
	// UpdateSession writes s's harness session id, status, turns, event
	// count and update time.
	UpdateSession(ctx context.Context, s Session) error
	// AppendSessionEvents adds events (their Seq unique in the session).
	AppendSessionEvents(ctx context.Context, events []SessionEvent) error
	// ListSessionEvents returns a session's events in order.
	ListSessionEvents(ctx context.Context, sessionID string) ([]SessionEvent, error)
}
