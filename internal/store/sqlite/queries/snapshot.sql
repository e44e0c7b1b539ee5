-- name: CreateSnapshot :exec
INSERT INTO snapshots (id, org_id, workspace_id, runtime_id, name, provider, image, config, destination, location, size_bytes, created_at)
VALUES (sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(runtime_id), sqlc.arg(name), sqlc.arg(provider),
        sqlc.arg(image), sqlc.arg(config), sqlc.arg(destination), sqlc.arg(location), sqlc.arg(size_bytes), sqlc.arg(created_at));

-- name: GetSnapshot :one
SELECT * FROM snapshots WHERE id = ?;

-- name: ListSnapshots :many
SELECT * FROM snapshots
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.arg(runtime_id) = '' OR runtime_id = sqlc.arg(runtime_id))
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (sqlc.narg(after_at), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: ListOrgSnapshots :many
SELECT * FROM snapshots WHERE org_id = ? ORDER BY created_at, id;

-- name: DeleteSnapshot :execrows
DELETE FROM snapshots WHERE id = ?;
