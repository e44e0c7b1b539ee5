-- name: TakeToken :one
-- Refills the bucket by the time since its last draw (never backwards), up
-- to the burst, and takes a whole token if there is one, in one statement:
-- the upsert holds the row's lock, so concurrent draws on any replica
-- apply one after another. A bucket never drawn from starts full, less
-- this draw.
INSERT INTO rate_buckets (key, tokens, granted, drawn_at)
VALUES (sqlc.arg(key), sqlc.arg(burst)::float8 - 1, TRUE, sqlc.arg(at))
ON CONFLICT (key) DO UPDATE SET
    tokens = CASE
        WHEN LEAST(sqlc.arg(burst)::float8, rate_buckets.tokens + sqlc.arg(rate)::float8 * GREATEST(0, EXTRACT(EPOCH FROM excluded.drawn_at - rate_buckets.drawn_at))::float8) >= 1
        THEN LEAST(sqlc.arg(burst)::float8, rate_buckets.tokens + sqlc.arg(rate)::float8 * GREATEST(0, EXTRACT(EPOCH FROM excluded.drawn_at - rate_buckets.drawn_at))::float8) - 1
        ELSE LEAST(sqlc.arg(burst)::float8, rate_buckets.tokens + sqlc.arg(rate)::float8 * GREATEST(0, EXTRACT(EPOCH FROM excluded.drawn_at - rate_buckets.drawn_at))::float8)
    END,
    granted = LEAST(sqlc.arg(burst)::float8, rate_buckets.tokens + sqlc.arg(rate)::float8 * GREATEST(0, EXTRACT(EPOCH FROM excluded.drawn_at - rate_buckets.drawn_at))::float8) >= 1,
    drawn_at = GREATEST(rate_buckets.drawn_at, excluded.drawn_at)
RETURNING tokens, granted;

-- name: SweepBuckets :execrows
DELETE FROM rate_buckets WHERE drawn_at < $1;

-- name: LockCap :exec
-- Serializes the takers of one cap until the transaction ends.
SELECT pg_advisory_xact_lock(hashtext('paddock.live_holds'), hashtext(sqlc.arg(kind)::text || '/' || sqlc.arg(key)::text));

-- name: CountHolds :one
SELECT COUNT(*) FROM live_holds WHERE kind = $1 AND key = $2 AND expires_at > sqlc.arg(at);

-- name: InsertHold :exec
INSERT INTO live_holds (id, kind, key, holder, expires_at) VALUES ($1, $2, $3, $4, $5);

-- name: ReleaseHold :exec
DELETE FROM live_holds WHERE id = $1;

-- name: RenewHolds :execrows
UPDATE live_holds SET expires_at = sqlc.arg(expires_at)
WHERE holder = sqlc.arg(holder) AND expires_at > sqlc.arg(at) AND id = ANY(sqlc.arg(ids)::text[]);

-- name: SweepHolds :execrows
DELETE FROM live_holds WHERE expires_at <= $1;
