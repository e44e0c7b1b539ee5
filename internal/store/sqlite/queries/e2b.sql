-- name: CreateE2BSandbox :exec
INSERT INTO e2b_sandboxes (runtime_id, workspace_id, template_id, metadata, created_at)
VALUES (sqlc.arg(runtime_id), sqlc.arg(workspace_id), sqlc.arg(template_id), sqlc.arg(metadata), sqlc.arg(created_at));

-- name: GetE2BSandbox :one
SELECT * FROM e2b_sandboxes WHERE runtime_id = ?;

-- name: ListE2BSandboxes :many
SELECT * FROM e2b_sandboxes
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, runtime_id) > (sqlc.narg(after_at), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, runtime_id
LIMIT sqlc.arg(lim);
