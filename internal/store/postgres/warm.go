package postgres

import (
	"context"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// The warm pool.

func warmFromRow(r pgdb.WarmSandbox) store.WarmSandbox {
	return store.WarmSandbox{
		ID: r.ID, Template: r.Template, State: store.WarmState(r.State), Provider: r.Provider,
		ProviderSandboxID: r.ProviderSandboxID, ProviderState: blob(r.ProviderState), Image: r.Image,
		CPUMillis: r.CpuMillis, MemoryMB: r.MemoryMb, WorkspaceVolume: r.WorkspaceVolume,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
}

// CreateWarmSandbox inserts w. A zero UpdatedAt is its creation time.
func (q *queries) CreateWarmSandbox(ctx context.Context, w store.WarmSandbox) error {
	err := dialect.Required(dialect.Warm, "id", w.ID, "template", w.Template, "state", string(w.State),
		"provider", w.Provider, "workspace volume", w.WorkspaceVolume)
	if err != nil {
		return err
	}
	created, updated := dialect.WarmTimes(w, now)
	err = q.q.CreateWarmSandbox(ctx, pgdb.CreateWarmSandboxParams{
		ID: w.ID, Template: w.Template, State: string(w.State), Provider: w.Provider,
		ProviderSandboxID: w.ProviderSandboxID, ProviderState: blob(w.ProviderState), Image: w.Image,
		CpuMillis: w.CPUMillis, MemoryMb: w.MemoryMB, WorkspaceVolume: w.WorkspaceVolume,
		CreatedAt: stamp(created), UpdatedAt: stamp(updated),
	})
	return classify("create warm sandbox", dialect.Warm, err)
}

// GetWarmSandbox returns the warm sandbox with id.
func (q *queries) GetWarmSandbox(ctx context.Context, id string) (store.WarmSandbox, error) {
	r, err := q.q.GetWarmSandbox(ctx, id)
	if err != nil {
		return store.WarmSandbox{}, classify("get warm sandbox", dialect.Warm, err)
	}
	return warmFromRow(r), nil
}

// UpdateWarmSandbox writes w's state and provider fields.
func (q *queries) UpdateWarmSandbox(ctx context.Context, w store.WarmSandbox) error {
	if err := dialect.Required(dialect.Warm, "id", w.ID, "state", string(w.State)); err != nil {
		return err
	}
	n, err := q.q.UpdateWarmSandbox(ctx, pgdb.UpdateWarmSandboxParams{
		ID: w.ID, State: string(w.State), ProviderSandboxID: w.ProviderSandboxID,
		ProviderState: blob(w.ProviderState), UpdatedAt: orNow(w.UpdatedAt),
	})
	if err != nil {
		return classify("update warm sandbox", dialect.Warm, err)
	}
	if n == 0 {
		return dialect.NotFound(dialect.Warm, nil)
	}
	return nil
}

// ListWarmSandboxes lists every warm sandbox, oldest first.
func (q *queries) ListWarmSandboxes(ctx context.Context) ([]store.WarmSandbox, error) {
	rows, err := q.q.ListWarmSandboxes(ctx)
	if err != nil {
		return nil, classify("list warm sandboxes", dialect.Warm, err)
	}
	return mapRows(rows, warmFromRow), nil
}

// ClaimWarmSandbox deletes and returns the oldest ready warm sandbox of
// template in one statement that skips rows other claims hold, so two
// claims, on one replica or many, never get the same one.
func (q *queries) ClaimWarmSandbox(ctx context.Context, template string) (store.WarmSandbox, error) {
	r, err := q.q.ClaimWarmSandbox(ctx, template)
	if err != nil {
		return store.WarmSandbox{}, classify("claim warm sandbox", dialect.Warm, err)
	}
	return warmFromRow(r), nil
}

// DeleteWarmSandbox deletes the warm sandbox with id.
func (q *queries) DeleteWarmSandbox(ctx context.Context, id string) error {
	n, err := q.q.DeleteWarmSandbox(ctx, id)
	return deleted(dialect.Warm, n, err)
}
