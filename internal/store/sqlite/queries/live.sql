-- The limits' live state (migration 0013).

-- TakeToken is in live.go: sqlc's SQLite parser leaves parameters
-- inside an upsert's DO UPDATE clause unbound.

-- name: SweepBuckets :execrows
DELETE FROM rate_buckets WHERE drawn_at < ?;

-- name: CountHolds :one
SELECT COUNT(*) FROM live_holds WHERE kind = ? AND key = ? AND expires_at > sqlc.arg(at);

-- name: InsertHold :exec
INSERT INTO live_holds (id, kind, key, holder, expires_at) VALUES (?, ?, ?, ?, ?);

-- name: ReleaseHold :exec
DELETE FROM live_holds WHERE id = ?;

-- name: RenewHolds :execrows
-- ids is a JSON array of hold ids: one statement, and one prepared text,
-- whatever their number.
UPDATE live_holds SET expires_at = sqlc.arg(expires_at)
WHERE holder = sqlc.arg(holder) AND expires_at > sqlc.arg(at)
  AND id IN (SELECT value FROM json_each(sqlc.arg(ids)));

-- name: SweepHolds :execrows
DELETE FROM live_holds WHERE expires_at <= ?;
