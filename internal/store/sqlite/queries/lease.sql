-- Leases: who runs a background loop (migration 0012).

-- name: AcquireLease :one
-- Takes a lease never taken, or one that is free, expired or already the
-- holder's, in one statement: the upsert's WHERE leaves another holder's
-- live lease alone, and then no row comes back. A change of holder
-- increments the token and restarts acquired_at.
INSERT INTO leases (name, holder, token, acquired_at, renewed_at, expires_at)
VALUES (sqlc.arg(name), sqlc.arg(holder), 1, sqlc.arg(at), sqlc.arg(at), sqlc.arg(expires_at))
ON CONFLICT (name) DO UPDATE SET
    token = CASE WHEN leases.holder = excluded.holder THEN leases.token ELSE leases.token + 1 END,
    acquired_at = CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at ELSE excluded.acquired_at END,
    holder = excluded.holder, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at
WHERE leases.holder = excluded.holder OR leases.holder = '' OR leases.expires_at <= excluded.renewed_at
RETURNING *;

-- name: GetLease :one
SELECT * FROM leases WHERE name = ?;

-- name: ReleaseLease :execrows
UPDATE leases SET holder = '' WHERE name = sqlc.arg(name) AND holder = sqlc.arg(holder) AND token = sqlc.arg(token);

-- name: ListLeases :many
SELECT * FROM leases ORDER BY name;
