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
SELECT * FROM sandboxes WHERE id = $1;

-- name: GetSandboxByProviderID :one
SELECT * FROM sandboxes
WHERE org_id = sqlc.arg(org_id) AND provider_sandbox_id = sqlc.arg(provider_sandbox_id)
ORDER BY created_at DESC, id DESC
LIMIT 1;

-- ProviderSandboxIDsByPrefix returns up to two provider ids of the org
-- that start with prefix and are longer than it: two tell an ambiguous
-- prefix.
-- name: ProviderSandboxIDsByPrefix :many
SELECT DISTINCT provider_sandbox_id FROM sandboxes
WHERE org_id = sqlc.arg(org_id)
  AND starts_with(provider_sandbox_id, sqlc.arg(prefix)::text)
  AND provider_sandbox_id <> sqlc.arg(prefix)::text
LIMIT 2;

-- ListSandboxes lists an org's rows newest first; a NULL filter matches
-- every row.
-- name: ListSandboxes :many
SELECT * FROM sandboxes
WHERE org_id = sqlc.arg(org_id)
  AND (sqlc.narg(kind)::text IS NULL OR kind = sqlc.narg(kind)::text)
  AND (sqlc.narg(state)::text IS NULL OR state = sqlc.narg(state)::text)
  AND (sqlc.narg(provider)::text IS NULL OR provider = sqlc.narg(provider)::text)
  AND (sqlc.narg(runtime_id)::text IS NULL OR runtime_id = sqlc.narg(runtime_id)::text)
  AND (sqlc.narg(workspaces)::text[] IS NULL OR workspace_id = ANY (sqlc.narg(workspaces)::text[]))
  AND (sqlc.narg(before_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_at)::timestamptz, sqlc.narg(before_id)::text))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: CountSandboxes :many
SELECT provider, state, COUNT(*) AS count FROM sandboxes
WHERE state <> 'killed'
GROUP BY provider, state
ORDER BY provider, state;

-- name: SandboxExists :one
SELECT EXISTS (SELECT 1 FROM sandboxes WHERE id = $1);

-- name: RecordSandboxProvider :one
UPDATE sandboxes SET
    provider_sandbox_id = sqlc.arg(provider_sandbox_id), provider_state = sqlc.narg(provider_state),
    updated_at = sqlc.arg(at)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- A start or a resume keeps the first start and clears the pause.
-- name: MarkSandboxRunning :one
UPDATE sandboxes SET
    state = 'running', pause_reason = '', paused_at = NULL,
    started_at = COALESCE(started_at, sqlc.arg(at)::timestamptz), running_since = sqlc.arg(at)::timestamptz,
    expires_at = sqlc.narg(expires_at), updated_at = sqlc.arg(at)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- name: MarkSandboxPaused :one
UPDATE sandboxes SET
    state = 'paused', pause_reason = sqlc.arg(pause_reason), paused_at = sqlc.arg(at)::timestamptz,
    updated_at = sqlc.arg(at)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- A kill without detail keeps the row's error.
-- name: KillSandbox :one
UPDATE sandboxes SET
    state = 'killed', kill_reason = sqlc.arg(kill_reason),
    error = COALESCE(NULLIF(sqlc.arg(detail)::text, ''), error),
    killed_at = sqlc.arg(at)::timestamptz, pause_reason = '', expires_at = NULL,
    updated_at = sqlc.arg(at)::timestamptz, version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version)
RETURNING *;

-- name: ExtendSandboxExpiry :execrows
UPDATE sandboxes SET expires_at = sqlc.arg(expires_at)::timestamptz
WHERE id = sqlc.arg(id) AND state = 'running'
  AND expires_at IS NOT NULL AND expires_at < sqlc.arg(expires_at)::timestamptz;

-- name: SetSandboxExpiry :execrows
UPDATE sandboxes SET expires_at = sqlc.arg(expires_at)::timestamptz
WHERE id = sqlc.arg(id) AND state = 'running';
