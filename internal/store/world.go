package store

import (
	"context"
	"encoding/json"
	"time"
)

// World statuses. starting makes its members; deleting removes them;
// deleted and failed are final.
const (
	WorldStarting = "starting"
	WorldRunning  = "running"
	WorldPaused   = "paused"
	WorldDeleting = "deleting"
	WorldDeleted  = "deleted" // removed by a caller; kept for its cost
	WorldFailed   = "failed"  // a member could not start, or the server stopped mid-way
)

// WorldFinal reports whether a world in status is gone.
func WorldFinal(status string) bool { return status == WorldDeleted || status == WorldFailed }

// World is a set of sandboxes of kind world started together on one
// private network. Its members (their names, configurations and ledger
// rows) are a versioned JSON document of the world service's own
// (internal/world); the store keeps it as it is.
type World struct {
	ID          string
	OrgID       string
	WorkspaceID string
	Name        string
	Status      string
	Spec        json.RawMessage
	CreatedAt   time.Time
	// Runner is the replica acting on it: the one that made it, then the
	// one that deletes it; "" for a world made before migration 0024
	// (unknown).
	Runner string
}

// WorldQueries keep worlds (migration 0020).
type WorldQueries interface {
	// CreateWorld inserts w.
	CreateWorld(ctx context.Context, w World) error
	// GetWorld returns the world id, ErrNotFound when there is none.
	GetWorld(ctx context.Context, id string) (World, error)
	// ListWorlds lists a workspace's worlds oldest first.
	ListWorlds(ctx context.Context, workspaceID string, page Page) ([]World, string, error)
	// UpdateWorld writes w's status, spec and runner when the stored world is
	// still in status from, and reports whether it was.
	UpdateWorld(ctx context.Context, w World, from string) (bool, error)
	// ListLiveWorlds lists every world of the installation not yet
	// deleted or failed, oldest first.
	ListLiveWorlds(ctx context.Context) ([]World, error)
}
