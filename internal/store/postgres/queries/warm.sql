-- The warm pool: compute provisioned ahead of demand, per template.

-- name: CreateWarmSandbox :exec
INSERT INTO warm_sandboxes (id, template, state, provider, provider_sandbox_id, provider_state, image,
    cpu_millis, memory_mb, workspace_volume, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12);

-- name: GetWarmSandbox :one
SELECT * FROM warm_sandboxes WHERE id = $1;

-- name: UpdateWarmSandbox :execrows
UPDATE warm_sandboxes SET state = $2, provider_sandbox_id = $3, provider_state = $4, updated_at = $5
WHERE id = $1;

-- name: ListWarmSandboxes :many
SELECT * FROM warm_sandboxes ORDER BY created_at, id;

-- name: ClaimWarmSandbox :one
-- Deletes and returns the oldest ready warm sandbox of a template. Claims
-- on many replicas at once each lock a different row: SKIP LOCKED passes
-- over a row another claim holds (and will delete) to the next one, so no
-- claim waits on another, none gets a row twice, and none comes back
-- empty while a ready row nobody holds is left.
DELETE FROM warm_sandboxes WHERE id = (
    SELECT w.id FROM warm_sandboxes w
    WHERE w.template = sqlc.arg(template) AND w.state = 'ready'
    ORDER BY w.created_at, w.id
    LIMIT 1
    FOR UPDATE SKIP LOCKED)
RETURNING *;

-- name: DeleteWarmSandbox :execrows
DELETE FROM warm_sandboxes WHERE id = $1;
