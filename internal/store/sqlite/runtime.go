package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

const runtimeColumns = "id, org_id, workspace_id, project_id, status, status_reason, config, " +
	"current_sandbox_id, workspace_volume, snapshot, version, created_at, updated_at"

func scanRuntime(sc rowScanner) (store.Runtime, error) {
	var r store.Runtime
	var config string
	var created, updated sql.NullInt64
	err := sc.Scan(&r.ID, &r.OrgID, &r.WorkspaceID, &r.ProjectID, &r.Status, &r.StatusReason, &config,
		&r.CurrentSandboxID, &r.WorkspaceVolume, &r.Snapshot, &r.Version, &created, &updated)
	if err != nil {
		return store.Runtime{}, err
	}
	if err := json.Unmarshal([]byte(config), &r.Config); err != nil {
		return store.Runtime{}, errDecode(resRuntime, "config", err)
	}
	r.CreatedAt = fromMicros(created)
	r.UpdatedAt = fromMicros(updated)
	return r, nil
}

// CreateRuntime inserts r with version 1. A project has at most one runtime.
func (q *queries) CreateRuntime(ctx context.Context, r store.Runtime) error {
	err := required(resRuntime, "id", r.ID, "org id", r.OrgID, "workspace id", r.WorkspaceID,
		"project id", r.ProjectID, "status", string(r.Status))
	if err != nil {
		return err
	}
	config, err := json.Marshal(r.Config)
	if err != nil {
		return errEncode(resRuntime, "config", err)
	}
	created := orNow(r.CreatedAt)
	updated := r.UpdatedAt
	if updated.IsZero() {
		updated = created
	}
	_, err = q.w.ExecContext(ctx, "INSERT INTO runtimes ("+runtimeColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
		r.ID, r.OrgID, r.WorkspaceID, r.ProjectID, r.Status, r.StatusReason, string(config),
		r.CurrentSandboxID, r.WorkspaceVolume, r.Snapshot, micros(created), micros(updated))
	return classify("create runtime", resRuntime, err)
}

// GetRuntime returns the runtime with id.
func (q *queries) GetRuntime(ctx context.Context, id string) (store.Runtime, error) {
	r, err := scanRuntime(q.r.QueryRowContext(ctx, "SELECT "+runtimeColumns+" FROM runtimes WHERE id = ?", id))
	return r, classify("get runtime", resRuntime, err)
}

// FindRuntimesByIDPrefix returns at most limit runtimes whose id starts
// with prefix, which must be at least 8 characters of hex and dashes.
func (q *queries) FindRuntimesByIDPrefix(ctx context.Context, prefix string, limit int) ([]store.Runtime, error) {
	if len(prefix) < 8 || strings.Trim(prefix, "0123456789abcdef-") != "" {
		return nil, errdefs.InvalidArgument("invalid_runtime_id", "%q is not a runtime id prefix", prefix)
	}
	rows, err := q.r.QueryContext(ctx, "SELECT "+runtimeColumns+" FROM runtimes WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
		prefix, prefix+"\xff", max(limit, 1))
	if err != nil {
		return nil, classify("find runtimes", resRuntime, err)
	}
	defer rows.Close()
	var out []store.Runtime
	for rows.Next() {
		r, err := scanRuntime(rows)
		if err != nil {
			return nil, classify("find runtimes", resRuntime, err)
		}
		out = append(out, r)
	}
	return out, classify("find runtimes", resRuntime, rows.Err())
}

// GetRuntimeByProject returns the runtime of projectID.
func (q *queries) GetRuntimeByProject(ctx context.Context, projectID string) (store.Runtime, error) {
	r, err := scanRuntime(q.r.QueryRowContext(ctx,
		"SELECT "+runtimeColumns+" FROM runtimes WHERE project_id = ?", projectID))
	return r, classify("get runtime by project", resRuntime, err)
}

// ListRuntimes lists the runtimes of workspaceID in creation order.
func (q *queries) ListRuntimes(ctx context.Context, workspaceID string, page store.Page) ([]store.Runtime, string, error) {
	return listing[store.Runtime]{
		op:    "list runtimes",
		res:   resRuntime,
		from:  "SELECT " + runtimeColumns + " FROM runtimes",
		where: []string{"workspace_id = ?"},
		args:  []any{workspaceID},
		scan:  scanRuntime,
		key:   func(r store.Runtime) (time.Time, string) { return r.CreatedAt, r.ID },
	}.run(ctx, q.r, page)
}

// ListRuntimesByStatus lists every runtime in one of statuses, oldest first.
// No statuses lists nothing.
func (q *queries) ListRuntimesByStatus(ctx context.Context, statuses []store.RuntimeStatus) ([]store.Runtime, error) {
	if len(statuses) == 0 {
		return nil, nil
	}
	args := make([]any, len(statuses))
	for i, s := range statuses {
		args[i] = string(s)
	}
	rows, err := q.r.QueryContext(ctx, "SELECT "+runtimeColumns+" FROM runtimes WHERE status IN ("+
		placeholders(len(statuses))+") ORDER BY created_at, id", args...)
	if err != nil {
		return nil, classify("list runtimes by status", resRuntime, err)
	}
	rts, err := collect(rows, scanRuntime)
	return rts, classify("list runtimes by status", resRuntime, err)
}

// setRuntime applies one verb's SET clause to runtime id at version: it
// stamps updated_at with at (zero: now), bumps the version and returns the
// stored row.
func (q *queries) setRuntime(ctx context.Context, op, id string, version int64, at time.Time, set string, args ...any) (store.Runtime, error) {
	if err := required(resRuntime, "id", id); err != nil {
		return store.Runtime{}, err
	}
	args = append(args, micros(orNow(at)), id, version)
	got, err := scanRuntime(q.w.QueryRowContext(ctx, `UPDATE runtimes SET `+set+`, updated_at = ?, version = version + 1
		WHERE id = ? AND version = ? RETURNING `+runtimeColumns, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Runtime{}, q.missOrConflict(ctx, "runtimes", resRuntime, id, version)
	}
	return got, classify(op, resRuntime, err)
}

// SetRuntimeState writes the lifecycle columns.
func (q *queries) SetRuntimeState(ctx context.Context, id string, version int64, st store.RuntimeState, at time.Time) (store.Runtime, error) {
	if err := required(resRuntime, "status", string(st.Status)); err != nil {
		return store.Runtime{}, err
	}
	return q.setRuntime(ctx, "set a runtime's state", id, version, at,
		"status = ?, status_reason = ?, current_sandbox_id = ?", st.Status, st.StatusReason, st.CurrentSandboxID)
}

// SetRuntimeConfig writes the configuration.
func (q *queries) SetRuntimeConfig(ctx context.Context, id string, version int64, c store.RuntimeConfig, at time.Time) (store.Runtime, error) {
	config, err := json.Marshal(c)
	if err != nil {
		return store.Runtime{}, errEncode(resRuntime, "config", err)
	}
	return q.setRuntime(ctx, "set a runtime's config", id, version, at, "config = ?", string(config))
}

// SetRuntimeSnapshot writes the snapshot reference.
func (q *queries) SetRuntimeSnapshot(ctx context.Context, id string, version int64, ref string, at time.Time) (store.Runtime, error) {
	return q.setRuntime(ctx, "set a runtime's snapshot", id, version, at, "snapshot = ?", ref)
}

// SetRuntimeWorkspaceVolume writes the workspace volume's name.
func (q *queries) SetRuntimeWorkspaceVolume(ctx context.Context, id string, version int64, volume string, at time.Time) (store.Runtime, error) {
	return q.setRuntime(ctx, "set a runtime's workspace volume", id, version, at, "workspace_volume = ?", volume)
}

// DeleteRuntime deletes the runtime with id.
func (q *queries) DeleteRuntime(ctx context.Context, id string) error {
	return q.deleteByID(ctx, "runtimes", resRuntime, id)
}

// missOrConflict explains why a versioned update matched no row: the row is
// gone (ErrNotFound) or its version moved on (ErrConflict).
func (q *queries) missOrConflict(ctx context.Context, table string, res resource, id string, version int64) error {
	var one int
	err := q.w.QueryRowContext(ctx, "SELECT 1 FROM "+table+" WHERE id = ?", id).Scan(&one)
	if err != nil {
		return classify("update "+string(res), res, err)
	}
	return versionConflict(res, id, version)
}
