-- name: CreateWorld :exec
INSERT INTO worlds (id, org_id, workspace_id, name, status, spec, created_at, runner)
VALUES (sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(name), sqlc.arg(status), sqlc.arg(spec), sqlc.arg(created_at),
        sqlc.arg(runner));

-- name: GetWorld :one
SELECT * FROM worlds WHERE id = $1;

-- name: ListWorlds :many
SELECT * FROM worlds
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) > (sqlc.narg(after_at), sqlc.narg(after_id)::text))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: UpdateWorld :execrows
UPDATE worlds SET status = sqlc.arg(status), spec = sqlc.arg(spec), runner = sqlc.arg(runner)
WHERE id = sqlc.arg(id) AND status = sqlc.arg(from_status);

-- name: ListLiveWorlds :many
SELECT * FROM worlds WHERE status NOT IN ('deleted', 'failed') ORDER BY created_at, id;
