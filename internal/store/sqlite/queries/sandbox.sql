-- name: CreateSandbox :exec
INSERT INTO sandboxes (
    id, org_id, workspace_id, project_id, runtime_id, kind, state, pause_reason,
    provider, provider_sandbox_id, provider_state, image, cpu_millis, memory_mb, secret_ids,
    kill_reason, error, billed_micros, created_at, started_at, paused_at, killed_at, expires_at,
    last_settled_at, running_since, version, updated_at, network, billing_version
) VALUES (
    sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(project_id), sqlc.arg(runtime_id),
    sqlc.arg(kind), sqlc.arg(state), sqlc.arg(pause_reason), sqlc.arg(provider), sqlc.arg(provider_sandbox_id),
    sqlc.narg(provider_state), sqlc.arg(image), sqlc.arg(cpu_millis), sqlc.arg(memory_mb), sqlc.narg(secret_ids),
    sqlc.arg(kill_reason), sqlc.arg(error), sqlc.arg(billed_micros), sqlc.arg(created_at), sqlc.narg(started_at),
    sqlc.narg(paused_at), sqlc.narg(killed_at), sqlc.narg(expires_at), sqlc.narg(last_settled_at),
    sqlc.narg(running_since), 1, sqlc.arg(updated_at), sqlc.arg(network), 1
);

-- name: GetSandbox :one
SELECT * FROM sandboxes WHERE id = ?;

-- name: GetSandboxByProviderID :one
SELECT * FROM sandboxes
WHERE org_id = sqlc.arg(org_id) AND provider_sandbox_id = sqlc.arg(provider_sandbox_id)
ORDER BY created_at DESC, id DESC
LIMIT 1;

-- ProviderSandboxIDsByPrefix returns up to two provider ids of the org in
-- (prefix, below): the caller passes below = prefix + 0x7f, above every
-- ASCII id that starts with prefix. Two tell an ambiguous prefix.
-- name: ProviderSandboxIDsByPrefix :many
SELECT DISTINCT provider_sandbox_id FROM sandboxes
WHERE org_id = sqlc.arg(org_id)
  AND provider_sandbox_id > sqlc.arg(prefix) AND provider_sandbox_id < sqlc.arg(below)
LIMIT 2;

-- ListSandboxes lists an org's rows newest first; a NULL filter matches
-- every row. workspaces is a JSON array of workspace ids (a slice here
-- would number the parameters after it wrongly).
-- name: ListSandboxes :many
SELECT * FROM sandboxes
WHERE org_id = sqlc.arg(org_id)
  AND (CAST(sqlc.narg(kind) AS TEXT) IS NULL OR kind = CAST(sqlc.narg(kind) AS TEXT))
  AND (CAST(sqlc.narg(state) AS TEXT) IS NULL OR state = CAST(sqlc.narg(state) AS TEXT))
  AND (CAST(sqlc.narg(provider) AS TEXT) IS NULL OR provider = CAST(sqlc.narg(provider) AS TEXT))
  AND (CAST(sqlc.narg(runtime_id) AS TEXT) IS NULL OR runtime_id = CAST(sqlc.narg(runtime_id) AS TEXT))
  AND (CAST(sqlc.narg(workspaces) AS TEXT) IS NULL
       OR workspace_id IN (SELECT j.value FROM json_each(CAST(sqlc.narg(workspaces) AS TEXT)) AS j))
  AND (CAST(sqlc.narg(before_at) AS INTEGER) IS NULL
       OR (created_at, id) < (CAST(sqlc.narg(before_at) AS INTEGER), CAST(sqlc.narg(before_id) AS TEXT)))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: CountSandboxes :many
SELECT provider, state, COUNT(*) AS count FROM sandboxes
WHERE state != 'killed'
GROUP BY provider, state
ORDER BY provider, state;

-- name: SandboxExists :one
SELECT EXISTS (SELECT 1 FROM sandboxes WHERE id = ?);

-- name: RecordSandboxProvider :one
UPDATE sandboxes SET
    provider_sandbox_id = sqlc.arg(provider_sandbox_id), provider_state = sqlc.narg(provider_state),
    updated_at = sqlc.arg(at), version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- A start or a resume keeps the first start and clears the pause.
-- name: MarkSandboxRunning :one
UPDATE sandboxes SET
    state = 'running', pause_reason = '', paused_at = NULL,
    started_at = COALESCE(started_at, CAST(sqlc.arg(at) AS INTEGER)), running_since = CAST(sqlc.arg(at) AS INTEGER),
    expires_at = sqlc.narg(expires_at), updated_at = CAST(sqlc.arg(at) AS INTEGER), version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- name: MarkSandboxPaused :one
UPDATE sandboxes SET
    state = 'paused', pause_reason = sqlc.arg(pause_reason), paused_at = CAST(sqlc.arg(at) AS INTEGER),
    updated_at = CAST(sqlc.arg(at) AS INTEGER), version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- A kill without detail keeps the row's error.
-- name: KillSandbox :one
UPDATE sandboxes SET
    state = 'killed', kill_reason = sqlc.arg(kill_reason),
    error = COALESCE(NULLIF(CAST(sqlc.arg(detail) AS TEXT), ''), error),
    killed_at = CAST(sqlc.arg(at) AS INTEGER), pause_reason = '', expires_at = NULL,
    updated_at = CAST(sqlc.arg(at) AS INTEGER), version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- name: ExtendSandboxExpiry :execrows
UPDATE sandboxes SET expires_at = CAST(sqlc.arg(expires_at) AS INTEGER)
WHERE id = sqlc.arg(id) AND state = 'running'
  AND expires_at IS NOT NULL AND expires_at < CAST(sqlc.arg(expires_at) AS INTEGER);

-- name: SetSandboxExpiry :execrows
UPDATE sandboxes SET expires_at = CAST(sqlc.arg(expires_at) AS INTEGER)
WHERE id = sqlc.arg(id) AND state = 'running';
