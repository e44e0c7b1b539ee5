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
SELECT * FROM invitations WHERE id = $1;

-- name: InvitationExists :one
SELECT EXISTS (SELECT 1 FROM invitations WHERE id = $1);

-- name: ListInvitations :many
SELECT * FROM invitations
WHERE (sqlc.narg(org_id)::text IS NULL OR org_id = sqlc.narg(org_id))
  AND ((sqlc.narg(email)::text IS NULL AND sqlc.narg(wallet)::text IS NULL)
       OR email = sqlc.narg(email) OR wallet = sqlc.narg(wallet))
  AND (sqlc.narg(pending_at)::timestamptz IS NULL
       OR (state = 'pending' AND expires_at > sqlc.narg(pending_at)))
  AND (sqlc.narg(before_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_at), sqlc.narg(before_id)::text))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: CountPendingInvitations :one
SELECT COUNT(*) FROM invitations WHERE org_id = sqlc.arg(org_id) AND state = 'pending' AND expires_at > sqlc.arg(at);

-- name: DecideInvitation :execrows
UPDATE invitations SET state = sqlc.arg(state), decided_at = sqlc.arg(decided_at)::timestamptz
WHERE id = sqlc.arg(id) AND state = 'pending';

-- name: RevokeInvitationsBy :execrows
UPDATE invitations SET state = 'revoked', decided_at = sqlc.arg(decided_at)::timestamptz
WHERE org_id = sqlc.arg(org_id) AND inviter_id = sqlc.arg(inviter_id) AND state = 'pending';
