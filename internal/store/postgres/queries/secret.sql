-- Secrets: sealed values of an org (workspace_id '') or of a workspace.
-- hosts is a JSON array of strings.

-- name: CreateSecret :exec
INSERT INTO secrets (id, org_id, workspace_id, name, env, brokered, hosts, key_id, sealed, version, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $10);

-- name: GetSecret :one
SELECT * FROM secrets WHERE id = $1;

-- name: GetSecretByName :one
SELECT * FROM secrets WHERE org_id = $1 AND workspace_id = $2 AND name = $3;

-- name: ListSecrets :many
SELECT * FROM secrets
WHERE org_id = sqlc.arg(org_id) AND workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) > (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::text))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: AllSecrets :many
SELECT * FROM secrets ORDER BY id;

-- name: UpdateSecret :one
UPDATE secrets SET env = $3, brokered = $4, hosts = $5, key_id = $6, sealed = $7,
    version = version + 1, updated_at = $8
WHERE id = $1 AND version = $2
RETURNING *;

-- name: SecretExists :one
SELECT EXISTS (SELECT 1 FROM secrets WHERE id = $1);

-- name: DeleteSecret :execrows
DELETE FROM secrets WHERE id = $1;
