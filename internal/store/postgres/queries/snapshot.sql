-- name: CreateSnapshot :exec
INSERT INTO snapshots (id, org_id, workspace_id, runtime_id, name, provider, image, config, destination, location, size_bytes, created_at, billed_until)
VALUES (sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(runtime_id), sqlc.arg(name), sqlc.arg(provider),
        sqlc.arg(image), sqlc.arg(config), sqlc.arg(destination), sqlc.arg(location), sqlc.arg(size_bytes), sqlc.arg(created_at), sqlc.arg(created_at));

-- name: GetSnapshot :one
SELECT * FROM snapshots WHERE id = $1;

-- name: ListSnapshots :many
SELECT * FROM snapshots
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.arg(runtime_id)::text = '' OR runtime_id = sqlc.arg(runtime_id)::text)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) > (sqlc.narg(after_at), sqlc.narg(after_id)::text))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: ListSnapshotsAfter :many
SELECT * FROM snapshots WHERE id > sqlc.arg(after_id)::text ORDER BY id LIMIT sqlc.arg(lim);

-- name: GetSnapshotForUpdate :one
SELECT * FROM snapshots WHERE id = $1 FOR UPDATE;

-- name: SetSnapshotBilledUntil :execrows
UPDATE snapshots SET billed_until = sqlc.arg(up_to) WHERE id = sqlc.arg(id) AND billed_until = sqlc.arg(from_at);

-- name: DeleteSnapshot :execrows
DELETE FROM snapshots WHERE id = $1;
