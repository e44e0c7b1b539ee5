-- name: CreateE2BSandbox :exec
INSERT INTO e2b_sandboxes (runtime_id, workspace_id, template_id, metadata, created_at)
VALUES (sqlc.arg(runtime_id), sqlc.arg(workspace_id), sqlc.arg(template_id), sqlc.arg(metadata), sqlc.arg(created_at));

-- name: GetE2BSandbox :one
SELECT * FROM e2b_sandboxes WHERE runtime_id = $1;

-- name: ListE2BSandboxes :many
SELECT * FROM e2b_sandboxes
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, runtime_id) > (sqlc.narg(after_at), sqlc.narg(after_id)::text))
ORDER BY created_at, runtime_id
LIMIT sqlc.arg(lim);
