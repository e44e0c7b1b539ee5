package sqlite

import (
	"context"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// The warm pool.

func warmFromRow(r litedb.WarmSandbox) store.WarmSandbox {
	return store.WarmSandbox{
		ID: r.ID, Template: r.Template, State: store.WarmState(r.State), Provider: r.Provider,
		ProviderSandboxID: r.ProviderSandboxID, ProviderState: blob(r.ProviderState), Image: r.Image,
		CPUMillis: r.CpuMillis, MemoryMB: r.MemoryMb, WorkspaceVolume: r.WorkspaceVolume,
		CreatedAt: fromMicro(r.CreatedAt), UpdatedAt: fromMicro(r.UpdatedAt),
	}
}

// CreateWarmSandbox inserts w. A zero UpdatedAt is its creation time.
func (q *queries) CreateWarmSandbox(ctx context.Context, w store.WarmSandbox) error {
	err := required(resWarm, "id", w.ID, "template", w.Template, "state", string(w.State),
		"provider", w.Provider, "workspace volume", w.WorkspaceVolume)
	if err != nil {
		return err
	}
	created, updated := dialect.WarmTimes(w, now)
	err = q.wq.CreateWarmSandbox(ctx, litedb.CreateWarmSandboxParams{
		ID: w.ID, Template: w.Template, State: string(w.State), Provider: w.Provider,
		ProviderSandboxID: w.ProviderSandboxID, ProviderState: blob(w.ProviderState), Image: w.Image,
		CpuMillis: w.CPUMillis, MemoryMb: w.MemoryMB, WorkspaceVolume: w.WorkspaceVolume,
		CreatedAt: micros(created), UpdatedAt: micros(updated),
	})
	return classify("create warm sandbox", resWarm, err)
}

// GetWarmSandbox returns the warm sandbox with id.
func (q *queries) GetWarmSandbox(ctx context.Context, id string) (store.WarmSandbox, error) {
	r, err := q.rq.GetWarmSandbox(ctx, id)
	if err != nil {
		return store.WarmSandbox{}, classify("get warm sandbox", resWarm, err)
	}
	return warmFromRow(r), nil
}

// UpdateWarmSandbox writes w's state and provider fields.
func (q *queries) UpdateWarmSandbox(ctx context.Context, w store.WarmSandbox) error {
	if err := required(resWarm, "id", w.ID, "state", string(w.State)); err != nil {
		return err
	}
	n, err := q.wq.UpdateWarmSandbox(ctx, litedb.UpdateWarmSandboxParams{
		ID: w.ID, State: string(w.State), ProviderSandboxID: w.ProviderSandboxID,
		ProviderState: blob(w.ProviderState), UpdatedAt: micros(orNow(w.UpdatedAt)),
	})
	if err != nil {
		return classify("update warm sandbox", resWarm, err)
	}
	if n == 0 {
		return notFound(resWarm, nil)
	}
	return nil
}

// ListWarmSandboxes lists every warm sandbox, oldest first.
func (q *queries) ListWarmSandboxes(ctx context.Context) ([]store.WarmSandbox, error) {
	rows, err := q.rq.ListWarmSandboxes(ctx)
	if err != nil {
		return nil, classify("list warm sandboxes", resWarm, err)
	}
	return mapRows(rows, total(warmFromRow))
}

// ClaimWarmSandbox deletes and returns the oldest ready warm sandbox of
// template in one statement, so two claims can never get the same one.
func (q *queries) ClaimWarmSandbox(ctx context.Context, template string) (store.WarmSandbox, error) {
	r, err := q.wq.ClaimWarmSandbox(ctx, template)
	if err != nil {
		return store.WarmSandbox{}, classify("claim warm sandbox", resWarm, err)
	}
	return warmFromRow(r), nil
}

// DeleteWarmSandbox deletes the warm sandbox with id.
func (q *queries) DeleteWarmSandbox(ctx context.Context, id string) error {
	n, err := q.wq.DeleteWarmSandbox(ctx, id)
	return deleted(resWarm, n, err)
}
