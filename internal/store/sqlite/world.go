package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Worlds (migration 0020).

const resWorld = dialect.World

func toWorld(w litedb.World) (store.World, error) {
	return store.World{ID: w.ID, OrgID: w.OrgID, WorkspaceID: w.WorkspaceID, Name: w.Name, Status: w.Status,
		Spec: json.RawMessage(w.Spec), CreatedAt: fromMicro(w.CreatedAt), Runner: w.Runner}, nil
}

// CreateWorld inserts w.
func (q *queries) CreateWorld(ctx context.Context, w store.World) error {
	if err := dialect.CheckWorld(w); err != nil {
		return err
	}
	return classify("create world", resWorld, q.wq.CreateWorld(ctx, litedb.CreateWorldParams{
		ID: w.ID, OrgID: w.OrgID, WorkspaceID: w.WorkspaceID, Name: w.Name, Status: w.Status,
		Spec: string(w.Spec), CreatedAt: micros(orNow(w.CreatedAt)), Runner: w.Runner,
	}))
}

// GetWorld returns the world id.
func (q *queries) GetWorld(ctx context.Context, id string) (store.World, error) {
	w, err := q.rq.GetWorld(ctx, id)
	if err != nil {
		return store.World{}, classify("get world", resWorld, err)
	}
	return toWorld(w)
}

// ListWorlds lists a workspace's worlds, oldest first.
func (q *queries) ListWorlds(ctx context.Context, workspaceID string, page store.Page) ([]store.World, string, error) {
	return listPage(ctx, "list worlds", resWorld, page,
		func(ctx context.Context, k keyset) ([]litedb.World, error) {
			return q.rq.ListWorlds(ctx, litedb.ListWorldsParams{WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toWorld, func(w store.World) (time.Time, string) { return w.CreatedAt, w.ID })
}

// UpdateWorld writes w's status, spec and runner if it is still in from.
func (q *queries) UpdateWorld(ctx context.Context, w store.World, from string) (bool, error) {
	if err := dialect.CheckWorld(w); err != nil {
		return false, err
	}
	n, err := q.wq.UpdateWorld(ctx, litedb.UpdateWorldParams{Status: w.Status, Spec: string(w.Spec), Runner: w.Runner, ID: w.ID, FromStatus: from})
	return n == 1, classify("update world", resWorld, err)
}

// ListLiveWorlds lists the worlds not deleted or failed.
func (q *queries) ListLiveWorlds(ctx context.Context) ([]store.World, error) {
	rows, err := q.rq.ListLiveWorlds(ctx)
	if err != nil {
		return nil, classify("list live worlds", resWorld, err)
	}
	return mapRows(rows, toWorld)
}
