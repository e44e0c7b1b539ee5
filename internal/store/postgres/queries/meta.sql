-- name: GetMeta :one
SELECT value FROM meta WHERE key = $1;

-- name: SetMeta :exec
INSERT INTO meta (key, value) VALUES ($1, $2)
ON CONFLICT (key) DO UPDATE SET value = excluded.value;

-- name: InitMeta :one
-- Inserts the value unless the key has one, and returns the one stored:
-- the DO UPDATE that changes nothing makes the stored row come back.
INSERT INTO meta (key, value) VALUES ($1, $2)
ON CONFLICT (key) DO UPDATE SET value = meta.value
RETURNING value;
