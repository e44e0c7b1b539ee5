-- name: CreateRuntime :exec
INSERT INTO runtimes (
    id, org_id, workspace_id, project_id, status, status_reason, config,
    current_sandbox_id, workspace_volume, snapshot, version, created_at, updated_at
) VALUES (
    sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(project_id), sqlc.arg(status),
    sqlc.arg(status_reason), sqlc.arg(config), sqlc.arg(current_sandbox_id), sqlc.arg(workspace_volume),
    sqlc.arg(snapshot), 1, sqlc.arg(created_at), sqlc.arg(updated_at)
);

-- name: GetRuntime :one
SELECT * FROM runtimes WHERE id = ?;

-- name: GetRuntimeByProject :one
SELECT * FROM runtimes WHERE project_id = ?;

-- FindRuntimesByIDPrefix takes the ids in [prefix, below): the caller
-- checks the prefix is hex and dashes and passes below = prefix + 0xff.
-- name: FindRuntimesByIDPrefix :many
SELECT * FROM runtimes
WHERE id >= sqlc.arg(prefix) AND id < sqlc.arg(below)
ORDER BY id
LIMIT sqlc.arg(lim);

-- name: ListRuntimes :many
SELECT * FROM runtimes
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (CAST(sqlc.narg(after_at) AS INTEGER), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: ListRuntimesByStatus :many
SELECT * FROM runtimes
WHERE status IN (sqlc.slice(statuses))
ORDER BY created_at, id;

-- The runtime verbs: each writes one group of columns under the row's
-- version, bumps the version and returns the row (see store.RuntimeQueries).

-- name: SetRuntimeState :one
UPDATE runtimes SET
    status = sqlc.arg(status), status_reason = sqlc.arg(status_reason),
    current_sandbox_id = sqlc.arg(current_sandbox_id),
    updated_at = sqlc.arg(updated_at), version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- name: SetRuntimeConfig :one
UPDATE runtimes SET config = sqlc.arg(config), updated_at = sqlc.arg(updated_at), version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- name: SetRuntimeSnapshot :one
UPDATE runtimes SET snapshot = sqlc.arg(snapshot), updated_at = sqlc.arg(updated_at), version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- name: SetRuntimeWorkspaceVolume :one
UPDATE runtimes SET workspace_volume = sqlc.arg(workspace_volume), updated_at = sqlc.arg(updated_at), version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- name: RuntimeExists :one
SELECT EXISTS (SELECT 1 FROM runtimes WHERE id = ?);

-- name: DeleteRuntime :execrows
DELETE FROM runtimes WHERE id = ?;
