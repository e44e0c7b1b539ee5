package store

import (
	"context"
	"time"
)

// ---------------------------------------------------------------------------
// Snapshots
//
// Vocabulary:
//
//   - Snapshot: a named copy of a runtime's workspace files and of its
//     configuration, taken on request (internal/snapshot), kept as one
//     artifact at a destination until it is deleted. It outlives its
//     runtime: a project deleted keeps its snapshots, which can still be
//     restored into a new project of the same workspace.
//   - Destination: where the artifact is ("local", under the data
//     directory, or "s3", an S3-compatible bucket); Location is its key
//     there.
// ---------------------------------------------------------------------------

// Snapshot is one taken snapshot.
type Snapshot struct {
	ID          string
	OrgID       string
	WorkspaceID string
	// RuntimeID is the runtime it was taken of; the runtime may be gone.
	RuntimeID string
	Name      string
	// Provider and Image are the runtime's when it was taken (also in
	// Config), kept apart to say where it may be restored.
	Provider string
	Image    string
	// Config is the runtime's configuration when it was taken.
	Config RuntimeConfig
	// Destination and Location say where the artifact is.
	Destination string
	Location    string
	// SizeBytes is the artifact's size, what is billed.
	SizeBytes int64
	CreatedAt time.Time
}

// SnapshotQueries keep snapshots' records (the artifacts are the snapshot
// service's).
type SnapshotQueries interface {
	// CreateSnapshot inserts s; a name taken in its workspace is
	// ErrConflict with the code snapshot_exists.
	CreateSnapshot(ctx context.Context, s Snapshot) error
	GetSnapshot(ctx context.Context, id string) (Snapshot, error)
	// ListSnapshots lists a workspace's snapshots, oldest first; only
	// runtimeID's when it is not "".
	ListSnapshots(ctx context.Context, workspaceID, runtimeID string, page Page) ([]Snapshot, string, error)
	// ListOrgSnapshots lists every snapshot of an org (what the ledger
	// bills), oldest first.
	ListOrgSnapshots(ctx context.Context, orgID string) ([]Snapshot, error)
	// DeleteSnapshot deletes the record id.
	DeleteSnapshot(ctx context.Context, id string) error
}
