package task

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// CodeSnapshotNotFound is the snapshot service's code for a snapshot the
// caller may not see, answered too where this installation takes none.
const CodeSnapshotNotFound = "snapshot_not_found"

// fillTimeout bounds copying a snapshot's files into a task's sandbox;
// it is not part of the command's time limit.
const fillTimeout = 10 * time.Minute

// Snapshot returns the snapshot id of ws a task may be made from;
// another workspace's is not found, as a missing one.
func (s *Service) Snapshot(ctx context.Context, ws store.Workspace, id string) (store.Snapshot, error) {
	if s.snapshots == nil {
		return store.Snapshot{}, errdefs.NotFound(CodeSnapshotNotFound, "no snapshot %s in this workspace", id)
	}
	return s.snapshots.Get(ctx, ws, id)
}

// fill copies t's snapshot's workspace files into the sandbox whose
// agent is c; a task made from no snapshot has nothing to copy.
func (s *Service) fill(ctx context.Context, c *agentconn.Client, t *Task) error {
	if t.Spec.SnapshotID == "" {
		return nil
	}
	if s.snapshots == nil {
		return errdefs.NotFound(CodeSnapshotNotFound, "this installation keeps no snapshots")
	}
	ctx, cancel := context.WithTimeout(ctx, fillTimeout)
	defer cancel()
	return s.snapshots.FillWorkspace(ctx, c, t.WorkspaceID, t.Spec.SnapshotID)
}
