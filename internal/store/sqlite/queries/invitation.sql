-- name: ExpireInvitationsTo :exec
UPDATE invitations SET state = 'expired', decided_at = expires_at
WHERE org_id = sqlc.arg(org_id)
  AND (email = sqlc.narg(email) OR wallet = sqlc.narg(wallet))
  AND state = 'pending' AND expires_at <= sqlc.arg(at);

-- name: CreateInvitation :exec
INSERT INTO invitations (id, org_id, email, wallet, role, inviter_id, state, created_at, expires_at, decided_at)
VALUES (sqlc.arg(id), sqlc.arg(org_id), sqlc.narg(email), sqlc.narg(wallet), sqlc.arg(role),
        sqlc.arg(inviter_id), 'pending', sqlc.arg(created_at), sqlc.arg(expires_at), NULL);

-- name: GetInvitation :one
SELECT * FROM invitations WHERE id = ?;

-- name: InvitationExists :one
SELECT EXISTS (SELECT 1 FROM invitations WHERE id = ?);

-- The listings of invitations are one query per scope (an org, an
-- address, all), so each reads its own index.

-- name: ListOrgInvitations :many
SELECT * FROM invitations
WHERE org_id = sqlc.arg(org_id)
  AND ((CAST(sqlc.narg(email) AS TEXT) IS NULL AND CAST(sqlc.narg(wallet) AS TEXT) IS NULL)
       OR email = sqlc.narg(email) OR wallet = sqlc.narg(wallet))
  AND (CAST(sqlc.narg(pending_at) AS INTEGER) IS NULL
       OR (state = 'pending' AND expires_at > sqlc.narg(pending_at)))
  AND (CAST(sqlc.narg(before_at) AS INTEGER) IS NULL
       OR (created_at, id) < (sqlc.narg(before_at), CAST(sqlc.narg(before_id) AS TEXT)))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: ListInvitationsTo :many
SELECT * FROM invitations
WHERE (email = sqlc.narg(email) OR wallet = sqlc.narg(wallet))
  AND (CAST(sqlc.narg(pending_at) AS INTEGER) IS NULL
       OR (state = 'pending' AND expires_at > sqlc.narg(pending_at)))
  AND (CAST(sqlc.narg(before_at) AS INTEGER) IS NULL
       OR (created_at, id) < (sqlc.narg(before_at), CAST(sqlc.narg(before_id) AS TEXT)))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: ListInvitations :many
SELECT * FROM invitations
WHERE (CAST(sqlc.narg(pending_at) AS INTEGER) IS NULL
       OR (state = 'pending' AND expires_at > sqlc.narg(pending_at)))
  AND (CAST(sqlc.narg(before_at) AS INTEGER) IS NULL
       OR (created_at, id) < (sqlc.narg(before_at), CAST(sqlc.narg(before_id) AS TEXT)))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: CountPendingInvitations :one
SELECT COUNT(*) FROM invitations WHERE org_id = sqlc.arg(org_id) AND state = 'pending' AND expires_at > sqlc.arg(at);

-- name: DecideInvitation :execrows
UPDATE invitations SET state = sqlc.arg(state), decided_at = CAST(sqlc.arg(decided_at) AS INTEGER)
WHERE id = sqlc.arg(id) AND state = 'pending';

-- name: RevokeInvitationsBy :execrows
UPDATE invitations SET state = 'revoked', decided_at = CAST(sqlc.arg(decided_at) AS INTEGER)
WHERE org_id = sqlc.arg(org_id) AND inviter_id = sqlc.arg(inviter_id) AND state = 'pending';
