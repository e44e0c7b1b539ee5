-- 0018: snapshots. A named copy of a runtime's workspace files and of its
-- configuration, taken on request (internal/snapshot). The artifact is at
-- a destination ('local' under the data directory, or 's3'), under
-- location; size_bytes is what the ledger bills per GiB-hour. A snapshot
-- outlives its runtime (no reference to runtimes): it goes with its
-- workspace, or when deleted.

CREATE TABLE snapshots (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    runtime_id   TEXT NOT NULL CHECK (runtime_id <> ''),
    name         TEXT NOT NULL CHECK (name <> ''),
    provider     TEXT NOT NULL,
    image        TEXT NOT NULL,
    config       TEXT NOT NULL,
    destination  TEXT NOT NULL CHECK (destination IN ('local', 's3')),
    location     TEXT NOT NULL CHECK (location <> ''),
    size_bytes   BIGINT NOT NULL CHECK (size_bytes >= 0),
    created_at   TIMESTAMPTZ NOT NULL,
    -- The ledger's watermark: storage is charged up to here.
    billed_until TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX snapshots_workspace ON snapshots (workspace_id, created_at, id);
