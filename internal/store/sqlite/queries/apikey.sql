-- name: CreateAPIKey :exec
INSERT INTO api_keys (id, name, hash, prefix, role, org_id, user_id, workspace_id, created_by,
                      maker_user_id, created_at, expires_at, revoked_at)
VALUES (sqlc.arg(id), sqlc.arg(name), sqlc.arg(hash), sqlc.arg(prefix), sqlc.arg(role),
        sqlc.narg(org_id), sqlc.narg(user_id), sqlc.narg(workspace_id), sqlc.arg(created_by),
        sqlc.narg(maker_user_id), sqlc.arg(created_at), sqlc.narg(expires_at), sqlc.narg(revoked_at));

-- name: GetAPIKeyByHash :one
SELECT * FROM api_keys WHERE hash = ?;

-- name: GetAPIKey :one
SELECT * FROM api_keys WHERE id = ?;

-- name: CountAPIKeys :one
SELECT COUNT(*) FROM api_keys;

-- The listings of keys are one query per scope, so each reads its own
-- index.

-- name: ListAPIKeys :many
SELECT * FROM api_keys
WHERE (CAST(sqlc.narg(user_id) AS TEXT) IS NULL OR user_id = sqlc.narg(user_id))
  AND (CAST(sqlc.narg(before_at) AS INTEGER) IS NULL
       OR (created_at, id) < (sqlc.narg(before_at), CAST(sqlc.narg(before_id) AS TEXT)))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: ListOrgAPIKeys :many
SELECT * FROM api_keys
WHERE org_id = CAST(sqlc.arg(org_id) AS TEXT)
  AND (CAST(sqlc.narg(user_id) AS TEXT) IS NULL OR user_id = sqlc.narg(user_id))
  AND (CAST(sqlc.narg(before_at) AS INTEGER) IS NULL
       OR (created_at, id) < (sqlc.narg(before_at), CAST(sqlc.narg(before_id) AS TEXT)))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: ListInstallationAPIKeys :many
SELECT * FROM api_keys
WHERE org_id IS NULL
  AND (CAST(sqlc.narg(user_id) AS TEXT) IS NULL OR user_id = sqlc.narg(user_id))
  AND (CAST(sqlc.narg(before_at) AS INTEGER) IS NULL
       OR (created_at, id) < (sqlc.narg(before_at), CAST(sqlc.narg(before_id) AS TEXT)))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: RevokeAPIKey :one
UPDATE api_keys SET revoked_at = COALESCE(revoked_at, CAST(sqlc.arg(at) AS INTEGER)) WHERE id = sqlc.arg(id)
RETURNING *;
