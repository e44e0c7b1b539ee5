-- name: CreateSnapshot :exec
INSERT INTO snapshots (id, org_id, workspace_id, runtime_id, name, provider, image, config, destination, location, size_bytes, created_at, billed_until)
VALUES (sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(runtime_id), sqlc.arg(name), sqlc.arg(provider),
        sqlc.arg(image), sqlc.arg(config), sqlc.arg(destination), sqlc.arg(location), sqlc.arg(size_bytes), sqlc.arg(created_at), sqlc.arg(created_at));

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

-- name: ListSnapshotsAfter :many
SELECT * FROM snapshots WHERE id > sqlc.arg(after_id) ORDER BY id LIMIT sqlc.arg(lim);

-- name: GetSnapshotForUpdate :one
SELECT * FROM snapshots WHERE id = ?;

-- name: SetSnapshotBilledUntil :execrows
UPDATE snapshots SET billed_until = sqlc.arg(up_to) WHERE id = sqlc.arg(id) AND billed_until = sqlc.arg(from_at);

-- name: DeleteSnapshot :execrows
DELETE FROM snapshots WHERE id = ?;
