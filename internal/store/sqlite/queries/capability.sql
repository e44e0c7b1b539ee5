-- name: CreateCapabilityVersion :exec
INSERT INTO capability_versions (id, org_id, name, version, description, digest, contents, bundle, size_bytes, created_at)
VALUES (
    sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(name), sqlc.arg(version), sqlc.arg(description), sqlc.arg(digest),
    sqlc.arg(contents), sqlc.arg(bundle), sqlc.arg(size_bytes), sqlc.arg(created_at)
);

-- name: GetCapabilityVersion :one
SELECT * FROM capability_versions
WHERE org_id = sqlc.arg(org_id) AND name = sqlc.arg(name) AND version = sqlc.arg(version);

-- ListCapabilityVersions leaves the bundles out.
-- name: ListCapabilityVersions :many
SELECT id, org_id, name, version, description, digest, contents, size_bytes, created_at
FROM capability_versions
WHERE org_id = sqlc.arg(org_id) AND (CAST(sqlc.narg(name) AS TEXT) IS NULL OR name = CAST(sqlc.narg(name) AS TEXT))
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
SELECT * FROM capability_bindings WHERE id = ?;

-- name: ListBindings :many
SELECT * FROM capability_bindings WHERE runtime_id = ? ORDER BY created_at, id;

-- name: UpdateBinding :one
UPDATE capability_bindings SET
    version = sqlc.arg(version), enabled = sqlc.arg(enabled), flags = sqlc.arg(flags),
    rev = rev + 1, updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND rev = sqlc.arg(rev)
RETURNING *;

-- name: BindingExists :one
SELECT EXISTS (SELECT 1 FROM capability_bindings WHERE id = ?);

-- name: SetBindingStatus :execrows
UPDATE capability_bindings SET status = sqlc.arg(status) WHERE id = sqlc.arg(id);

-- name: ReplaceBindingStatus :execrows
UPDATE capability_bindings SET status = sqlc.arg(to_status)
WHERE id = sqlc.arg(id) AND status = sqlc.arg(from_status);

-- name: DeleteBinding :execrows
DELETE FROM capability_bindings WHERE id = ?;

-- name: CountInventoryBindings :one
SELECT COUNT(*) FROM capability_bindings
WHERE org_id = sqlc.arg(org_id) AND source = 'inventory' AND name = sqlc.arg(name) AND version = sqlc.arg(version);

-- name: CreateSession :exec
INSERT INTO sessions (id, org_id, workspace_id, runtime_id, kind, harness, harness_session_id, status, title, turns, events, created_at, updated_at)
VALUES (
    sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(runtime_id), sqlc.arg(kind), sqlc.arg(harness),
    sqlc.arg(harness_session_id), sqlc.arg(status), sqlc.arg(title), sqlc.arg(turns), sqlc.arg(events),
    sqlc.arg(created_at), sqlc.arg(updated_at)
);

-- name: GetSession :one
SELECT * FROM sessions WHERE id = ?;

-- name: ListSessions :many
SELECT * FROM sessions
WHERE runtime_id = sqlc.arg(runtime_id)
  AND (CAST(sqlc.narg(before_at) AS INTEGER) IS NULL
       OR (created_at, id) < (CAST(sqlc.narg(before_at) AS INTEGER), CAST(sqlc.narg(before_id) AS TEXT)))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: UpdateSession :execrows
UPDATE sessions SET
    harness = sqlc.arg(harness), harness_session_id = sqlc.arg(harness_session_id), status = sqlc.arg(status),
    turns = sqlc.arg(turns), events = sqlc.arg(events), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id);

-- name: AppendSessionEvent :exec
INSERT INTO session_events (session_id, seq, turn, type, at, body)
VALUES (sqlc.arg(session_id), sqlc.arg(seq), sqlc.arg(turn), sqlc.arg(type), sqlc.arg(at), sqlc.arg(body));

-- name: ListSessionEvents :many
SELECT * FROM session_events WHERE session_id = ? ORDER BY seq;
