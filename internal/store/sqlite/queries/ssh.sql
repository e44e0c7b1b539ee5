-- name: CreateSSHKey :exec
INSERT INTO ssh_keys (id, user_id, name, fingerprint, public_key, org_id, workspace_id, role, api_key_id, created_at)
VALUES (sqlc.arg(id), sqlc.arg(user_id), sqlc.arg(name), sqlc.arg(fingerprint), sqlc.arg(public_key),
        sqlc.narg(org_id), sqlc.narg(workspace_id), sqlc.narg(role), sqlc.narg(api_key_id), sqlc.arg(created_at));

-- name: GetSSHKey :one
SELECT * FROM ssh_keys WHERE id = ?;

-- name: GetSSHKeyByFingerprint :one
SELECT * FROM ssh_keys WHERE fingerprint = ?;

-- name: ListSSHKeys :many
SELECT * FROM ssh_keys
WHERE user_id = sqlc.arg(user_id)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (sqlc.narg(after_at), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: DeleteSSHKey :execrows
DELETE FROM ssh_keys WHERE id = ? AND user_id = ?;
