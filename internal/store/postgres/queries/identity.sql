-- name: CreateUser :exec
INSERT INTO users (id, email, wallet, name, created_at)
VALUES (sqlc.arg(id), sqlc.narg(email), sqlc.narg(wallet), sqlc.arg(name), sqlc.arg(created_at));

-- name: GetUser :one
SELECT * FROM users WHERE id = $1;

-- name: GetUserByEmail :one
SELECT * FROM users WHERE email = $1;

-- name: GetUserByWallet :one
SELECT * FROM users WHERE wallet = $1;

-- name: ListUsers :many
SELECT * FROM users
WHERE sqlc.narg(after_at)::timestamptz IS NULL
   OR (created_at, id) > (sqlc.narg(after_at), sqlc.narg(after_id)::text)
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: LockUserWallet :one
SELECT wallet FROM users WHERE id = $1 FOR UPDATE;

-- name: UpdateUser :execrows
UPDATE users SET email = sqlc.narg(email), wallet = sqlc.narg(wallet), name = sqlc.arg(name)
WHERE id = sqlc.arg(id);

-- name: EndUserSessions :exec
UPDATE auth_sessions SET revoked_at = sqlc.arg(revoked_at)::timestamptz
WHERE user_id = sqlc.arg(user_id)::text AND key_id IS NULL AND revoked_at IS NULL;

-- name: DeleteUser :execrows
DELETE FROM users WHERE id = $1;

-- name: AddOrgMember :exec
INSERT INTO org_members (id, org_id, user_id, role, created_at)
VALUES ($1, $2, $3, $4, $5);

-- name: GetOrgMember :one
SELECT sqlc.embed(m), sqlc.embed(u)
FROM org_members m JOIN users u ON u.id = m.user_id
WHERE m.org_id = $1 AND m.user_id = $2;

-- name: ListOrgMembers :many
SELECT sqlc.embed(m), sqlc.embed(u)
FROM org_members m JOIN users u ON u.id = m.user_id
WHERE m.org_id = sqlc.arg(org_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (m.created_at, m.id) > (sqlc.narg(after_at), sqlc.narg(after_id)::text))
ORDER BY m.created_at, m.id
LIMIT sqlc.arg(lim);

-- name: ListUserOrgs :many
SELECT * FROM org_members WHERE user_id = $1 ORDER BY created_at, id;

-- name: SetOrgMemberRole :execrows
UPDATE org_members SET role = sqlc.arg(role)
WHERE org_id = sqlc.arg(org_id) AND user_id = sqlc.arg(user_id);

-- name: RemoveOrgMember :execrows
DELETE FROM org_members WHERE org_id = $1 AND user_id = $2;

-- name: RemoveOrgWorkspaceMemberships :exec
DELETE FROM workspace_members
WHERE user_id = sqlc.arg(user_id)
  AND workspace_id IN (SELECT w.id FROM workspaces w WHERE w.org_id = sqlc.arg(org_id));

-- name: RevokeOrgMemberKeys :exec
UPDATE api_keys SET revoked_at = sqlc.arg(revoked_at)::timestamptz
WHERE org_id = sqlc.arg(org_id)::text
  AND (user_id = sqlc.arg(user_id)::text OR maker_user_id = sqlc.arg(user_id)::text)
  AND revoked_at IS NULL;

-- name: CountOrgOwners :one
SELECT COUNT(*) FROM org_members WHERE org_id = $1 AND role = 'owner';

-- name: IsWorkspaceMember :one
SELECT EXISTS (SELECT 1 FROM workspace_members WHERE workspace_id = $1 AND user_id = $2);

-- name: ListMemberWorkspaces :many
SELECT m.workspace_id
FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
WHERE w.org_id = $1 AND m.user_id = $2
ORDER BY m.created_at, m.id;

-- name: DeleteExpiredAuthChallenges :exec
DELETE FROM auth_challenges WHERE expires_at <= $1;

-- name: CreateAuthChallenge :exec
INSERT INTO auth_challenges (nonce, wallet, message, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5);

-- name: GetAuthChallenge :one
SELECT * FROM auth_challenges WHERE nonce = $1;

-- name: ConsumeAuthChallenge :execrows
DELETE FROM auth_challenges WHERE nonce = sqlc.arg(nonce) AND expires_at > sqlc.arg(at);

-- name: CreateAuthSession :exec
INSERT INTO auth_sessions (id, user_id, key_id, created_at, expires_at, revoked_at)
VALUES (sqlc.arg(id), sqlc.narg(user_id), sqlc.narg(key_id), sqlc.arg(created_at), sqlc.arg(expires_at), sqlc.narg(revoked_at));

-- name: GetAuthSession :one
SELECT * FROM auth_sessions WHERE id = $1;

-- name: RevokeAuthSession :execrows
UPDATE auth_sessions SET revoked_at = COALESCE(revoked_at, sqlc.arg(at)::timestamptz) WHERE id = sqlc.arg(id);
