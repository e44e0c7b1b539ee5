-- The warm pool: compute provisioned ahead of demand, per template.

-- name: CreateWarmSandbox :exec
INSERT INTO warm_sandboxes (id, template, state, provider, provider_sandbox_id, provider_state, image,
    cpu_millis, memory_mb, workspace_volume, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: GetWarmSandbox :one
SELECT * FROM warm_sandboxes WHERE id = ?;

-- name: UpdateWarmSandbox :execrows
UPDATE warm_sandboxes SET state = sqlc.arg(state), provider_sandbox_id = sqlc.arg(provider_sandbox_id),
    provider_state = sqlc.arg(provider_state), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id);

-- name: ListWarmSandboxes :many
SELECT * FROM warm_sandboxes ORDER BY created_at, id;

-- name: ClaimWarmSandbox :one
-- Deletes and returns the oldest ready warm sandbox of a template in one
-- statement, so two claims can never get the same one.
DELETE FROM warm_sandboxes WHERE id = (
    SELECT w.id FROM warm_sandboxes w
    WHERE w.template = sqlc.arg(template) AND w.state = 'ready'
    ORDER BY w.created_at, w.id
    LIMIT 1)
RETURNING *;

-- name: DeleteWarmSandbox :execrows
DELETE FROM warm_sandboxes WHERE id = ?;
