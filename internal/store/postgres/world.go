package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Worlds (migration 0020).

const resWorld = dialect.World

func toWorld(w pgdb.World) store.World {
	return store.World{ID: w.ID, OrgID: w.OrgID, WorkspaceID: w.WorkspaceID, Name: w.Name, Status: w.Status,
		Spec: json.RawMessage(w.Spec), CreatedAt: w.CreatedAt.UTC(), Runner: w.Runner}
}

// CreateWorld inserts w.
func (q *queries) CreateWorld(ctx context.Context, w store.World) error {
	if err := dialect.CheckWorld(w); err != nil {
		return err
	}
	return classify("create world", resWorld, q.q.CreateWorld(ctx, pgdb.CreateWorldParams{
		ID: w.ID, OrgID: w.OrgID, WorkspaceID: w.WorkspaceID, Name: w.Name, Status: w.Status,
		Spec: string(w.Spec), CreatedAt: orNow(w.CreatedAt), Runner: w.Runner,
	}))
}

// GetWorld returns the world id.
func (q *queries) GetWorld(ctx context.Context, id string) (store.World, error) {
	w, err := q.q.GetWorld(ctx, id)
	return toWorld(w), classify("get world", resWorld, err)
}

// ListWorlds lists a workspace's worlds, oldest first.
func (q *queries) ListWorlds(ctx context.Context, workspaceID string, page store.Page) ([]store.World, string, error) {
	return listPage(ctx, "list worlds", resWorld, page,
		func(ctx context.Context, k keyset) ([]pgdb.World, error) {
			return q.q.ListWorlds(ctx, pgdb.ListWorldsParams{WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toWorld, func(w store.World) (time.Time, string) { return w.CreatedAt, w.ID })
}

// UpdateWorld writes w's status, spec and runner if it is still in from.
func (q *queries) UpdateWorld(ctx context.Context, w store.World, from string) (bool, error) {
	if err := dialect.CheckWorld(w); err != nil {
		return false, err
	}
	n, err := q.q.UpdateWorld(ctx, pgdb.UpdateWorldParams{Status: w.Status, Spec: string(w.Spec), Runner: w.Runner, ID: w.ID, FromStatus: from})
	return n == 1, classify("update world", resWorld, err)
}

// ListLiveWorlds lists the worlds not deleted or failed.
func (q *queries) ListLiveWorlds(ctx context.Context) ([]store.World, error) {
	rows, err := q.q.ListLiveWorlds(ctx)
	return mapRows(rows, toWorld), classify("list live worlds", resWorld, err)
}
