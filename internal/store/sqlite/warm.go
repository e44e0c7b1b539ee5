package sqlite

import (
	"context"
	"database/sql"

	"github.com/paddockhq/paddock/internal/store"
)

const warmColumns = "id, template, state, provider, provider_sandbox_id, provider_state, image, " +
	"cpu_millis, memory_mb, workspace_volume, created_at, updated_at"

func scanWarm(sc rowScanner) (store.WarmSandbox, error) {
	var w store.WarmSandbox
	var created, updated sql.NullInt64
	err := sc.Scan(&w.ID, &w.Template, &w.State, &w.Provider, &w.ProviderSandboxID, &w.ProviderState,
		&w.Image, &w.CPUMillis, &w.MemoryMB, &w.WorkspaceVolume, &created, &updated)
	if err != nil {
		return store.WarmSandbox{}, err
	}
	w.ProviderState = blob(w.ProviderState)
	w.CreatedAt = fromMicros(created)
	w.UpdatedAt = fromMicros(updated)
	return w, nil
}

// CreateWarmSandbox inserts w.
func (q *queries) CreateWarmSandbox(ctx context.Context, w store.WarmSandbox) error {
	err := required(resWarm, "id", w.ID, "template", w.Template, "state", string(w.State),
		"provider", w.Provider, "workspace volume", w.WorkspaceVolume)
	if err != nil {
		return err
	}
	created := orNow(w.CreatedAt)
	updated := w.UpdatedAt
	if updated.IsZero() {
		updated = created
	}
	_, err = q.w.ExecContext(ctx, "INSERT INTO warm_sandboxes ("+warmColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		w.ID, w.Template, w.State, w.Provider, w.ProviderSandboxID, blob(w.ProviderState), w.Image,
		w.CPUMillis, w.MemoryMB, w.WorkspaceVolume, micros(created), micros(updated))
	return classify("create warm sandbox", resWarm, err)
}

// GetWarmSandbox returns the warm sandbox with id.
func (q *queries) GetWarmSandbox(ctx context.Context, id string) (store.WarmSandbox, error) {
	w, err := scanWarm(q.r.QueryRowContext(ctx, "SELECT "+warmColumns+" FROM warm_sandboxes WHERE id = ?", id))
	return w, classify("get warm sandbox", resWarm, err)
}

// UpdateWarmSandbox writes w's state and provider fields.
func (q *queries) UpdateWarmSandbox(ctx context.Context, w store.WarmSandbox) error {
	if err := required(resWarm, "id", w.ID, "state", string(w.State)); err != nil {
		return err
	}
	r, err := q.w.ExecContext(ctx, `UPDATE warm_sandboxes SET state = ?, provider_sandbox_id = ?,
		provider_state = ?, updated_at = ? WHERE id = ?`,
		w.State, w.ProviderSandboxID, blob(w.ProviderState), micros(orNow(w.UpdatedAt)), w.ID)
	if err != nil {
		return classify("update warm sandbox", resWarm, err)
	}
	n, err := r.RowsAffected()
	if err == nil && n == 0 {
		err = sql.ErrNoRows
	}
	return classify("update warm sandbox", resWarm, err)
}

// ListWarmSandboxes lists every warm sandbox, oldest first.
func (q *queries) ListWarmSandboxes(ctx context.Context) ([]store.WarmSandbox, error) {
	rows, err := q.r.QueryContext(ctx, "SELECT "+warmColumns+" FROM warm_sandboxes ORDER BY created_at, id")
	if err != nil {
		return nil, classify("list warm sandboxes", resWarm, err)
	}
	ws, err := collect(rows, scanWarm)
	return ws, classify("list warm sandboxes", resWarm, err)
}

// ClaimWarmSandbox deletes and returns the oldest ready warm sandbox of
// template in one statement, so two claims can never get the same one.
func (q *queries) ClaimWarmSandbox(ctx context.Context, template string) (store.WarmSandbox, error) {
	w, err := scanWarm(q.w.QueryRowContext(ctx, `DELETE FROM warm_sandboxes WHERE id = (
		SELECT id FROM warm_sandboxes WHERE template = ? AND state = ? ORDER BY created_at, id LIMIT 1)
		RETURNING `+warmColumns, template, store.WarmReady))
	return w, classify("claim warm sandbox", resWarm, err)
}

// DeleteWarmSandbox deletes the warm sandbox with id.
func (q *queries) DeleteWarmSandbox(ctx context.Context, id string) error {
	return q.deleteByID(ctx, "warm_sandboxes", resWarm, id)
}
