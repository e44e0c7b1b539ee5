-- name: CreateUser :exec
INSERT INTO users (id, email, wallet, name, created_at)
VALUES (sqlc.arg(id), sqlc.narg(email), sqlc.narg(wallet), sqlc.arg(name), sqlc.arg(created_at));

-- name: EmailTaken :one
SELECT EXISTS (SELECT 1 FROM users WHERE email = CAST(sqlc.arg(email) AS TEXT) AND id != sqlc.arg(id));

-- name: WalletTaken :one
SELECT EXISTS (SELECT 1 FROM users WHERE wallet = CAST(sqlc.arg(wallet) AS TEXT) AND id != sqlc.arg(id));

-- name: GetUser :one
SELECT * FROM users WHERE id = ?;

-- name: GetUserByEmail :one
SELECT * FROM users WHERE email = CAST(sqlc.arg(email) AS TEXT);

-- name: GetUserByWallet :one
SELECT * FROM users WHERE wallet = CAST(sqlc.arg(wallet) AS TEXT);

-- name: ListUsers :many
SELECT * FROM users
WHERE (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (sqlc.narg(after_at), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: EndUserSessionsOnNewWallet :exec
UPDATE auth_sessions SET revoked_at = CAST(sqlc.arg(revoked_at) AS INTEGER)
WHERE user_id = CAST(sqlc.arg(user_id) AS TEXT) AND key_id IS NULL AND revoked_at IS NULL
  AND (SELECT u.wallet FROM users u WHERE u.id = sqlc.arg(user_id)) IS NOT CAST(sqlc.narg(wallet) AS TEXT);

-- name: UpdateUser :execrows
UPDATE users SET email = sqlc.narg(email), wallet = sqlc.narg(wallet), name = sqlc.arg(name)
WHERE id = sqlc.arg(id);

-- name: DeleteUser :execrows
DELETE FROM users WHERE id = ?;

-- name: AddOrgMember :exec
INSERT INTO org_members (id, org_id, user_id, role, created_at)
VALUES (?, ?, ?, ?, ?);

-- name: GetOrgMember :one
SELECT sqlc.embed(m), sqlc.embed(u)
FROM org_members m JOIN users u ON u.id = m.user_id
WHERE m.org_id = ? AND m.user_id = ?;

-- name: ListOrgMembers :many
SELECT sqlc.embed(m), sqlc.embed(u)
FROM org_members m JOIN users u ON u.id = m.user_id
WHERE m.org_id = sqlc.arg(org_id)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (m.created_at, m.id) > (sqlc.narg(after_at), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY m.created_at, m.id
LIMIT sqlc.arg(lim);

-- name: ListUserOrgs :many
SELECT * FROM org_members WHERE user_id = ? ORDER BY created_at, id;

-- name: SetOrgMemberRole :execrows
UPDATE org_members SET role = sqlc.arg(role)
WHERE org_id = sqlc.arg(org_id) AND user_id = sqlc.arg(user_id);

-- name: RemoveOrgMember :execrows
DELETE FROM org_members WHERE org_id = ? AND user_id = ?;

-- name: RemoveOrgWorkspaceMemberships :exec
DELETE FROM workspace_members
WHERE user_id = sqlc.arg(user_id)
  AND workspace_id IN (SELECT w.id FROM workspaces w WHERE w.org_id = sqlc.arg(org_id));

-- name: RevokeOrgMemberKeys :exec
UPDATE api_keys SET revoked_at = CAST(sqlc.arg(revoked_at) AS INTEGER)
WHERE org_id = CAST(sqlc.arg(org_id) AS TEXT)
  AND (user_id = CAST(sqlc.arg(user_id) AS TEXT) OR maker_user_id = CAST(sqlc.arg(user_id) AS TEXT))
  AND revoked_at IS NULL;

-- name: CountOrgOwners :one
SELECT COUNT(*) FROM org_members WHERE org_id = ? AND role = 'owner';

-- name: IsWorkspaceMember :one
SELECT EXISTS (SELECT 1 FROM workspace_members WHERE workspace_id = ? AND user_id = ?);

-- name: ListMemberWorkspaces :many
SELECT m.workspace_id
FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
WHERE w.org_id = ? AND m.user_id = ?
ORDER BY m.created_at, m.id;

-- name: DeleteExpiredAuthChallenges :exec
DELETE FROM auth_challenges WHERE expires_at <= ?;

-- name: CreateAuthChallenge :exec
INSERT INTO auth_challenges (nonce, wallet, message, created_at, expires_at)
VALUES (?, ?, ?, ?, ?);

-- name: GetAuthChallenge :one
SELECT * FROM auth_challenges WHERE nonce = ?;

-- name: ConsumeAuthChallenge :execrows
DELETE FROM auth_challenges WHERE nonce = sqlc.arg(nonce) AND expires_at > sqlc.arg(at);

-- name: CreateAuthSession :exec
INSERT INTO auth_sessions (id, user_id, key_id, created_at, expires_at, revoked_at)
VALUES (sqlc.arg(id), sqlc.narg(user_id), sqlc.narg(key_id), sqlc.arg(created_at), sqlc.arg(expires_at), sqlc.narg(revoked_at));

-- name: GetAuthSession :one
SELECT * FROM auth_sessions WHERE id = ?;

-- name: RevokeAuthSession :execrows
UPDATE auth_sessions SET revoked_at = COALESCE(revoked_at, CAST(sqlc.arg(at) AS INTEGER)) WHERE id = sqlc.arg(id);
