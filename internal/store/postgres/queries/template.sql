-- Templates: a workspace's named runtime configs (migration 0016).

-- name: CreateTemplate :exec
INSERT INTO templates (id, org_id, workspace_id, name, description, config, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: GetTemplate :one
SELECT * FROM templates WHERE id = $1;

-- name: GetTemplateByName :one
SELECT * FROM templates WHERE workspace_id = $1 AND name = $2;

-- name: ListTemplates :many
SELECT * FROM templates
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) > (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::text))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: DeleteTemplate :execrows
DELETE FROM templates WHERE id = $1;
