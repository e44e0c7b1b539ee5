package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// runtimeOf maps a runtimes row to the store's record.
func runtimeOf(r pgdb.Runtime) (store.Runtime, error) {
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
		CreatedAt:        r.CreatedAt.UTC(),
		UpdatedAt:        r.UpdatedAt.UTC(),
	}
	if err := json.Unmarshal([]byte(r.Config), &out.Config); err != nil {
		return store.Runtime{}, errDecode(dialect.Runtime, "config", err)
	}
	return out, nil
}

// runtimesOf maps rows of runtimes, keeping nil for none.
func runtimesOf(rows []pgdb.Runtime) ([]store.Runtime, error) {
	var out []store.Runtime
	for _, r := range rows {
		rt, err := runtimeOf(r)
		if err != nil {
			return nil, err
		}
		out = append(out, rt)
	}
	return out, nil
}

// runtimeConfig encodes a runtime's configuration column.
func runtimeConfig(c store.RuntimeConfig) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", errEncode(dialect.Runtime, "config", err)
	}
	return string(b), nil
}

// CreateRuntime inserts r with version 1. A project has at most one runtime.
func (q *queries) CreateRuntime(ctx context.Context, r store.Runtime) error {
	err := dialect.Required(dialect.Runtime, "id", r.ID, "org id", r.OrgID, "workspace id", r.WorkspaceID,
		"project id", r.ProjectID, "status", string(r.Status))
	if err != nil {
		return err
	}
	config, err := runtimeConfig(r.Config)
	if err != nil {
		return err
	}
	created, updated := orNow(r.CreatedAt), orNow(r.UpdatedAt)
	if r.UpdatedAt.IsZero() {
		updated = created
	}
	return classify("create runtime", dialect.Runtime, q.q.CreateRuntime(ctx, pgdb.CreateRuntimeParams{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, ProjectID: r.ProjectID,
		Status: string(r.Status), StatusReason: r.StatusReason, Config: config,
		CurrentSandboxID: r.CurrentSandboxID, WorkspaceVolume: r.WorkspaceVolume, Snapshot: r.Snapshot,
		CreatedAt: created, UpdatedAt: updated,
	}))
}

// GetRuntime returns the runtime with id.
func (q *queries) GetRuntime(ctx context.Context, id string) (store.Runtime, error) {
	row, err := q.q.GetRuntime(ctx, id)
	return oneRuntime("get runtime", row, err)
}

// GetRuntimeByProject returns the runtime of projectID.
func (q *queries) GetRuntimeByProject(ctx context.Context, projectID string) (store.Runtime, error) {
	row, err := q.q.GetRuntimeByProject(ctx, projectID)
	return oneRuntime("get runtime by project", row, err)
}

// oneRuntime maps the row one statement returned, or classifies its error.
func oneRuntime(op string, row pgdb.Runtime, err error) (store.Runtime, error) {
	if err != nil {
		return store.Runtime{}, classify(op, dialect.Runtime, err)
	}
	return runtimeOf(row)
}

// FindRuntimesByIDPrefix returns at most limit runtimes whose id starts
// with prefix, which must be at least 8 characters of hex and dashes.
func (q *queries) FindRuntimesByIDPrefix(ctx context.Context, prefix string, limit int) ([]store.Runtime, error) {
	if err := dialect.CheckRuntimeIDPrefix(prefix); err != nil {
		return nil, err
	}
	rows, err := q.q.FindRuntimesByIDPrefix(ctx, pgdb.FindRuntimesByIDPrefixParams{Prefix: prefix, Lim: int32(min(max(limit, 1), math.MaxInt32))})
	if err != nil {
		return nil, classify("find runtimes", dialect.Runtime, err)
	}
	return runtimesOf(rows)
}

// ListRuntimes lists the runtimes of workspaceID in creation order.
func (q *queries) ListRuntimes(ctx context.Context, workspaceID string, page store.Page) ([]store.Runtime, string, error) {
	rows, next, err := listPage(ctx, "list runtimes", dialect.Runtime, page,
		func(ctx context.Context, k keyset) ([]pgdb.Runtime, error) {
			return q.q.ListRuntimes(ctx, pgdb.ListRuntimesParams{WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		}, same, func(r pgdb.Runtime) (time.Time, string) { return r.CreatedAt, r.ID })
	if err != nil {
		return nil, "", err
	}
	out, err := runtimesOf(rows)
	return out, next, err
}

// same is the conversion of a row that is mapped after paging, where the
// mapping can fail.
func same[R any](r R) R { return r }

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
	rows, err := q.q.ListRuntimesByStatus(ctx, ss)
	if err != nil {
		return nil, classify("list runtimes by status", dialect.Runtime, err)
	}
	return runtimesOf(rows)
}

// setRuntime runs one runtime verb: write, a generated versioned UPDATE,
// changes one group of columns of the row id at version. No row back is a
// missing runtime or a stale version, told apart as SQLite does.
func (q *queries) setRuntime(ctx context.Context, op, id string, version int64,
	write func() (pgdb.Runtime, error)) (store.Runtime, error) {
	if err := dialect.Required(dialect.Runtime, "id", id); err != nil {
		return store.Runtime{}, err
	}
	row, err := write()
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Runtime{}, missOrConflict(ctx, dialect.Runtime, id, version, q.q.RuntimeExists)
	}
	return oneRuntime(op, row, err)
}

// SetRuntimeState writes the lifecycle columns.
func (q *queries) SetRuntimeState(ctx context.Context, id string, version int64, st store.RuntimeState, at time.Time) (store.Runtime, error) {
	if err := dialect.Required(dialect.Runtime, "status", string(st.Status)); err != nil {
		return store.Runtime{}, err
	}
	return q.setRuntime(ctx, "set a runtime's state", id, version, func() (pgdb.Runtime, error) {
		return q.q.SetRuntimeState(ctx, pgdb.SetRuntimeStateParams{Status: string(st.Status), StatusReason: st.StatusReason,
			CurrentSandboxID: st.CurrentSandboxID, UpdatedAt: orNow(at), ID: id, Version: version})
	})
}

// SetRuntimeConfig writes the configuration.
func (q *queries) SetRuntimeConfig(ctx context.Context, id string, version int64, c store.RuntimeConfig, at time.Time) (store.Runtime, error) {
	config, err := runtimeConfig(c)
	if err != nil {
		return store.Runtime{}, err
	}
	return q.setRuntime(ctx, "set a runtime's config", id, version, func() (pgdb.Runtime, error) {
		return q.q.SetRuntimeConfig(ctx, pgdb.SetRuntimeConfigParams{Config: config, UpdatedAt: orNow(at), ID: id, Version: version})
	})
}

// SetRuntimeSnapshot writes the snapshot reference.
func (q *queries) SetRuntimeSnapshot(ctx context.Context, id string, version int64, ref string, at time.Time) (store.Runtime, error) {
	return q.setRuntime(ctx, "set a runtime's snapshot", id, version, func() (pgdb.Runtime, error) {
		return q.q.SetRuntimeSnapshot(ctx, pgdb.SetRuntimeSnapshotParams{Snapshot: ref, UpdatedAt: orNow(at), ID: id, Version: version})
	})
}

// SetRuntimeWorkspaceVolume writes the workspace volume's name.
func (q *queries) SetRuntimeWorkspaceVolume(ctx context.Context, id string, version int64, volume string, at time.Time) (store.Runtime, error) {
	return q.setRuntime(ctx, "set a runtime's workspace volume", id, version, func() (pgdb.Runtime, error) {
		return q.q.SetRuntimeWorkspaceVolume(ctx, pgdb.SetRuntimeWorkspaceVolumeParams{WorkspaceVolume: volume,
			UpdatedAt: orNow(at), ID: id, Version: version})
	})
}

// DeleteRuntime deletes the runtime with id; its bindings and sessions go
// with it.
func (q *queries) DeleteRuntime(ctx context.Context, id string) error {
	n, err := q.q.DeleteRuntime(ctx, id)
	return oneRow("delete runtime", dialect.Runtime, n, err)
}

// missOrConflict explains why a versioned update matched no row: the row
// is gone (not found) or its version moved on (a version conflict).
func missOrConflict(ctx context.Context, res dialect.Resource, id string, version int64, exists func(context.Context, string) (bool, error)) error {
	ok, err := exists(ctx, id)
	if err != nil {
		return classify("update "+string(res), res, err)
	}
	return dialect.MissOrConflict(res, id, version, ok)
}

// oneRow checks a statement that must touch one row by key: none is not
// found. (Nothing references a runtime, a binding or a capability version
// without ON DELETE CASCADE, so their deletes are never refused.)
func oneRow(op string, res dialect.Resource, n int64, err error) error {
	if err == nil && n == 0 {
		return dialect.NotFound(res, nil)
	}
	return classify(op, res, err)
}
