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
	// BilledUntil is the ledger's watermark: its storage is charged up to
	// here (CreatedAt when it is created).
	BilledUntil time.Time
}

// SnapshotCharge is one charge for a snapshot's storage, of the period
// from its watermark From to UpTo.
type SnapshotCharge struct {
	OrgID        string
	SnapshotID   string
	From         time.Time // the snapshot's current watermark
	UpTo         time.Time // its new one
	AmountMicros int64     // > 0
	At           time.Time // zero = now
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
	// ListSnapshotsAfter lists snapshots of every org by id after afterID
	// ("" for the first page), at most limit: the settler's scan.
	ListSnapshotsAfter(ctx context.Context, afterID string, limit int) ([]Snapshot, error)
	// ChargeSnapshotStorage records a deduction (no sandbox; the
	// snapshot's runtime and workspace) of c.AmountMicros, at most the
	// available balance with the rest as shortfall, and moves the
	// snapshot's watermark from c.From to c.UpTo, together. A snapshot
	// whose watermark is not c.From is ErrConflict (settlement_stale) and
	// changes nothing, so a period is never charged twice.
	ChargeSnapshotStorage(ctx context.Context, c SnapshotCharge) (JournalEntry, error)
	// DeleteSnapshot deletes the record id.
	DeleteSnapshot(ctx context.Context, id string) error
}
