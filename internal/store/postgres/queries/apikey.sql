-- name: CreateAPIKey :exec
INSERT INTO api_keys (id, name, hash, prefix, role, org_id, user_id, workspace_id, created_by,
                      maker_user_id, created_at, expires_at, revoked_at)
VALUES (sqlc.arg(id), sqlc.arg(name), sqlc.arg(hash), sqlc.arg(prefix), sqlc.arg(role),
        sqlc.narg(org_id), sqlc.narg(user_id), sqlc.narg(workspace_id), sqlc.arg(created_by),
        sqlc.narg(maker_user_id), sqlc.arg(created_at), sqlc.narg(expires_at), sqlc.narg(revoked_at));

-- name: GetAPIKeyByHash :one
SELECT * FROM api_keys WHERE hash = $1;

-- name: GetAPIKey :one
SELECT * FROM api_keys WHERE id = $1;

-- name: CountAPIKeys :one
SELECT COUNT(*) FROM api_keys;

-- name: ListAPIKeys :many
SELECT * FROM api_keys
WHERE (NOT sqlc.arg(installation)::boolean OR org_id IS NULL)
  AND (sqlc.narg(org_id)::text IS NULL OR org_id = sqlc.narg(org_id))
  AND (sqlc.narg(user_id)::text IS NULL OR user_id = sqlc.narg(user_id))
  AND (sqlc.narg(before_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_at), sqlc.narg(before_id)::text))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: RevokeAPIKey :one
UPDATE api_keys SET revoked_at = COALESCE(revoked_at, sqlc.arg(at)::timestamptz) WHERE id = sqlc.arg(id)
RETURNING *;
