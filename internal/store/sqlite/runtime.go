package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// runtimeOf maps a runtimes row to the store's record.
func runtimeOf(r litedb.Runtime) (store.Runtime, error) {
	out := store.Runtime{
		ID:               r.ID,
		OrgID:            r.OrgID,
		WorkspaceID:      r.WorkspaceID,
		ProjectID:        r.ProjectID,
		Status:           store.RuntimeStatus(r.Status),
		StatusReason:     r.StatusReason,
		CurrentSandboxID: r.CurrentSandboxID,
		WorkspaceVolume:  r.WorkspaceVolume,
		Snapshot:         r.Snapshot,
		Version:          r.Version,
		CreatedAt:        fromMicro(r.CreatedAt),
		UpdatedAt:        fromMicro(r.UpdatedAt),
	}
	if err := json.Unmarshal([]byte(r.Config), &out.Config); err != nil {
		return store.Runtime{}, errDecode(resRuntime, "config", err)
	}
	return out, nil
}

// oneRuntime maps the row one statement returned, or classifies its error.
func oneRuntime(op string, row litedb.Runtime, err error) (store.Runtime, error) {
	if err != nil {
		return store.Runtime{}, classify(op, resRuntime, err)
	}
	return runtimeOf(row)
}

// manyRuntimes maps the rows one statement returned, or classifies its
// error; no rows is nil.
func manyRuntimes(op string, rows []litedb.Runtime, err error) ([]store.Runtime, error) {
	if err != nil {
		return nil, classify(op, resRuntime, err)
	}
	return mapRows(rows, runtimeOf)
}

// runtimeConfig encodes a runtime's configuration column.
func runtimeConfig(c store.RuntimeConfig) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", errEncode(resRuntime, "config", err)
	}
	return string(b), nil
}

// CreateRuntime inserts r with version 1. A project has at most one runtime.
func (q *queries) CreateRuntime(ctx context.Context, r store.Runtime) error {
	err := required(resRuntime, "id", r.ID, "org id", r.OrgID, "workspace id", r.WorkspaceID,
		"project id", r.ProjectID, "status", string(r.Status))
	if err != nil {
		return err
	}
	config, err := runtimeConfig(r.Config)
	if err != nil {
		return err
	}
	created := orNow(r.CreatedAt)
	updated := r.UpdatedAt
	if updated.IsZero() {
		updated = created
	}
	return classify("create runtime", resRuntime, q.wq.CreateRuntime(ctx, litedb.CreateRuntimeParams{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, ProjectID: r.ProjectID,
		Status: string(r.Status), StatusReason: r.StatusReason, Config: config,
		CurrentSandboxID: r.CurrentSandboxID, WorkspaceVolume: r.WorkspaceVolume, Snapshot: r.Snapshot,
		CreatedAt: micros(created), UpdatedAt: micros(updated),
	}))
}

// GetRuntime returns the runtime with id.
func (q *queries) GetRuntime(ctx context.Context, id string) (store.Runtime, error) {
	row, err := q.rq.GetRuntime(ctx, id)
	return oneRuntime("get runtime", row, err)
}

// FindRuntimesByIDPrefix returns at most limit runtimes whose id starts
// with prefix, which must be at least 8 characters of hex and dashes.
func (q *queries) FindRuntimesByIDPrefix(ctx context.Context, prefix string, limit int) ([]store.Runtime, error) {
	if err := dialect.CheckRuntimeIDPrefix(prefix); err != nil {
		return nil, err
	}
	rows, err := q.rq.FindRuntimesByIDPrefix(ctx, litedb.FindRuntimesByIDPrefixParams{
		Prefix: prefix, Below: prefix + "\xff", Lim: int64(max(limit, 1)),
	})
	return manyRuntimes("find runtimes", rows, err)
}

// GetRuntimeByProject returns the runtime of projectID.
func (q *queries) GetRuntimeByProject(ctx context.Context, projectID string) (store.Runtime, error) {
	row, err := q.rq.GetRuntimeByProject(ctx, projectID)
	return oneRuntime("get runtime by project", row, err)
}

// ListRuntimes lists the runtimes of workspaceID in creation order.
func (q *queries) ListRuntimes(ctx context.Context, workspaceID string, page store.Page) ([]store.Runtime, string, error) {
	return listPage(ctx, "list runtimes", resRuntime, page,
		func(ctx context.Context, k keyset) ([]litedb.Runtime, error) {
			return q.rq.ListRuntimes(ctx, litedb.ListRuntimesParams{WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		}, runtimeOf, func(r store.Runtime) (time.Time, string) { return r.CreatedAt, r.ID })
}

// ListRuntimesByStatus lists every runtime in one of statuses, oldest first.
// No statuses lists nothing.
func (q *queries) ListRuntimesByStatus(ctx context.Context, statuses []store.RuntimeStatus) ([]store.Runtime, error) {
	if len(statuses) == 0 {
		return nil, nil
	}
	ss := make([]string, len(statuses))
	for i, s := range statuses {
		ss[i] = string(s)
	}
	rows, err := q.rq.ListRuntimesByStatus(ctx, ss)
	return manyRuntimes("list runtimes by status", rows, err)
}

// setRuntime runs one runtime verb: write, a generated versioned UPDATE,
// changes one group of columns of the row id at version, stamps
// updated_at and bumps the version. No row back is a missing runtime or a
// stale version, told apart by versionMiss.
func (q *queries) setRuntime(ctx context.Context, op, id string, version int64,
	write func() (litedb.Runtime, error)) (store.Runtime, error) {
	if err := required(resRuntime, "id", id); err != nil {
		return store.Runtime{}, err
	}
	row, err := write()
	if errors.Is(err, sql.ErrNoRows) {
		return store.Runtime{}, versionMiss(ctx, resRuntime, id, version, q.wq.RuntimeExists)
	}
	return oneRuntime(op, row, err)
}

// SetRuntimeState writes the lifecycle columns.
func (q *queries) SetRuntimeState(ctx context.Context, id string, version int64, st store.RuntimeState, at time.Time) (store.Runtime, error) {
	if err := required(resRuntime, "status", string(st.Status)); err != nil {
		return store.Runtime{}, err
	}
	return q.setRuntime(ctx, "set a runtime's state", id, version, func() (litedb.Runtime, error) {
		return q.wq.SetRuntimeState(ctx, litedb.SetRuntimeStateParams{Status: string(st.Status), StatusReason: st.StatusReason,
			CurrentSandboxID: st.CurrentSandboxID, UpdatedAt: micros(orNow(at)), ID: id, Version: version})
	})
}

// SetRuntimeConfig writes the configuration.
func (q *queries) SetRuntimeConfig(ctx context.Context, id string, version int64, c store.RuntimeConfig, at time.Time) (store.Runtime, error) {
	config, err := runtimeConfig(c)
	if err != nil {
		return store.Runtime{}, err
	}
	return q.setRuntime(ctx, "set a runtime's config", id, version, func() (litedb.Runtime, error) {
		return q.wq.SetRuntimeConfig(ctx, litedb.SetRuntimeConfigParams{Config: config, UpdatedAt: micros(orNow(at)), ID: id, Version: version})
	})
}

// SetRuntimeSnapshot writes the snapshot reference.
func (q *queries) SetRuntimeSnapshot(ctx context.Context, id string, version int64, ref string, at time.Time) (store.Runtime, error) {
	return q.setRuntime(ctx, "set a runtime's snapshot", id, version, func() (litedb.Runtime, error) {
		return q.wq.SetRuntimeSnapshot(ctx, litedb.SetRuntimeSnapshotParams{Snapshot: ref, UpdatedAt: micros(orNow(at)), ID: id, Version: version})
	})
}

// SetRuntimeWorkspaceVolume writes the workspace volume's name.
func (q *queries) SetRuntimeWorkspaceVolume(ctx context.Context, id string, version int64, volume string, at time.Time) (store.Runtime, error) {
	return q.setRuntime(ctx, "set a runtime's workspace volume", id, version, func() (litedb.Runtime, error) {
		return q.wq.SetRuntimeWorkspaceVolume(ctx, litedb.SetRuntimeWorkspaceVolumeParams{WorkspaceVolume: volume,
			UpdatedAt: micros(orNow(at)), ID: id, Version: version})
	})
}

// DeleteRuntime deletes the runtime with id; its bindings and sessions go
// with it. (Nothing else references a runtime, so the delete is never
// refused.)
func (q *queries) DeleteRuntime(ctx context.Context, id string) error {
	n, err := q.wq.DeleteRuntime(ctx, id)
	return affected("delete runtime", resRuntime, n, err)
}

// versionMiss explains why a versioned update matched no row: the row is
// gone (ErrNotFound) or its version moved on (ErrConflict). exists is the
// generated query that tells whether a row of res with id is there.
func versionMiss(ctx context.Context, res resource, id string, version int64, exists func(context.Context, string) (bool, error)) error {
	ok, err := exists(ctx, id)
	if err != nil {
		return classify("update "+string(res), res, err)
	}
	return dialect.MissOrConflict(res, id, version, ok)
}
