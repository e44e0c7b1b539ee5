-- Templates: a workspace's named runtime configs (migration 0016).

-- name: CreateTemplate :exec
INSERT INTO templates (id, org_id, workspace_id, name, description, config, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?);

-- name: GetTemplate :one
SELECT * FROM templates WHERE id = ?;

-- name: GetTemplateByName :one
SELECT * FROM templates WHERE workspace_id = ? AND name = ?;

-- name: ListTemplates :many
SELECT * FROM templates
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (CAST(sqlc.narg(after_at) AS INTEGER), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: DeleteTemplate :execrows
DELETE FROM templates WHERE id = ?;
