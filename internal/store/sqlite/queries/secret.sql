-- Secrets: sealed values of an org (workspace_id '') or of a workspace.
-- hosts is a JSON array of strings.

-- name: CreateSecret :exec
INSERT INTO secrets (id, org_id, workspace_id, name, env, brokered, hosts, key_id, sealed, version, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(name), sqlc.arg(env), sqlc.arg(brokered),
    sqlc.arg(hosts), sqlc.arg(key_id), sqlc.arg(sealed), 1, sqlc.arg(created_at), sqlc.arg(created_at));

-- name: GetSecret :one
SELECT * FROM secrets WHERE id = ?;

-- name: GetSecretByName :one
SELECT * FROM secrets WHERE org_id = ? AND workspace_id = ? AND name = ?;

-- name: ListSecrets :many
SELECT * FROM secrets
WHERE org_id = sqlc.arg(org_id) AND workspace_id = sqlc.arg(workspace_id)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (CAST(sqlc.narg(after_at) AS INTEGER), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: AllSecrets :many
SELECT * FROM secrets ORDER BY id;

-- name: UpdateSecret :one
UPDATE secrets SET env = sqlc.arg(env), brokered = sqlc.arg(brokered), hosts = sqlc.arg(hosts),
    key_id = sqlc.arg(key_id), sealed = sqlc.arg(sealed), version = version + 1, updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- name: SecretExists :one
SELECT EXISTS (SELECT 1 FROM secrets WHERE id = ?);

-- name: DeleteSecret :execrows
DELETE FROM secrets WHERE id = ?;
