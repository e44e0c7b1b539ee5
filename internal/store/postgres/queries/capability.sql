-- name: CreateCapabilityVersion :exec
INSERT INTO capability_versions (id, org_id, name, version, description, digest, contents, bundle, size_bytes, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10);

-- name: GetCapabilityVersion :one
SELECT * FROM capability_versions
WHERE org_id = sqlc.arg(org_id) AND name = sqlc.arg(name) AND version = sqlc.arg(version);

-- ListCapabilityVersions leaves the bundles out.
-- name: ListCapabilityVersions :many
SELECT id, org_id, name, version, description, digest, contents, size_bytes, created_at
FROM capability_versions
WHERE org_id = sqlc.arg(org_id) AND (sqlc.narg(name)::text IS NULL OR name = sqlc.narg(name)::text)
ORDER BY name, created_at, id;

-- name: DeleteCapabilityVersion :execrows
DELETE FROM capability_versions
WHERE org_id = sqlc.arg(org_id) AND name = sqlc.arg(name) AND version = sqlc.arg(version);

-- name: CreateBinding :exec
INSERT INTO capability_bindings (id, org_id, runtime_id, source, name, version, enabled, flags, status, rev, created_at, updated_at)
VALUES (
    sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(runtime_id), sqlc.arg(source), sqlc.arg(name), sqlc.arg(version),
    sqlc.arg(enabled), sqlc.arg(flags), sqlc.arg(status), 1, sqlc.arg(created_at), sqlc.arg(created_at)
);

-- name: GetBinding :one
SELECT * FROM capability_bindings WHERE id = $1;

-- name: ListBindings :many
SELECT * FROM capability_bindings WHERE runtime_id = $1 ORDER BY created_at, id;

-- name: UpdateBinding :one
UPDATE capability_bindings SET
    version = sqlc.arg(version), enabled = sqlc.arg(enabled), flags = sqlc.arg(flags),
    rev = rev + 1, updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND rev = sqlc.arg(rev)
RETURNING *;

-- name: BindingExists :one
SELECT EXISTS (SELECT 1 FROM capability_bindings WHERE id = $1);

-- name: SetBindingStatus :execrows
UPDATE capability_bindings SET status = sqlc.arg(status) WHERE id = sqlc.arg(id);

-- name: ReplaceBindingStatus :execrows
UPDATE capability_bindings SET status = sqlc.arg(to_status)
WHERE id = sqlc.arg(id) AND status = sqlc.arg(from_status);

-- name: DeleteBinding :execrows
DELETE FROM capability_bindings WHERE id = $1;

-- name: CountInventoryBindings :one
SELECT COUNT(*) FROM capability_bindings
WHERE org_id = sqlc.arg(org_id) AND source = 'inventory' AND name = sqlc.arg(name) AND version = sqlc.arg(version);

-- name: CreateSession :exec
INSERT INTO sessions (id, org_id, workspace_id, runtime_id, kind, harness, harness_session_id, status, title, turns, events, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13);

-- name: GetSession :one
SELECT * FROM sessions WHERE id = $1;

-- name: ListSessions :many
SELECT * FROM sessions
WHERE runtime_id = sqlc.arg(runtime_id)
  AND (sqlc.narg(before_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_at)::timestamptz, sqlc.narg(before_id)::text))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: UpdateSession :execrows
UPDATE sessions SET
    harness = sqlc.arg(harness), harness_session_id = sqlc.arg(harness_session_id), status = sqlc.arg(status),
    turns = sqlc.arg(turns), events = sqlc.arg(events), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id);

-- AppendSessionEvents inserts a batch in one statement: the i-th element
-- of each array is one event (the arrays unnest in step).
-- name: AppendSessionEvents :exec
INSERT INTO session_events (session_id, seq, turn, type, at, body)
SELECT
    unnest(sqlc.arg(session_ids)::text[]), unnest(sqlc.arg(seqs)::bigint[]), unnest(sqlc.arg(turns)::bigint[]),
    unnest(sqlc.arg(types)::text[]), unnest(sqlc.arg(ats)::timestamptz[]), unnest(sqlc.arg(bodies)::text[]);

-- name: ListSessionEvents :many
SELECT * FROM session_events WHERE session_id = $1 ORDER BY seq;
