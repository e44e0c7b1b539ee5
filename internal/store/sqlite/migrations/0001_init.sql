-- 0001: the initial schema.
--
-- Conventions (kept dialect-neutral; PostgreSQL has its own tree):
--   ids are TEXT (UUID strings); times are INTEGER unix microseconds, NULL
--   when unset; JSON documents are TEXT; opaque bytes are BLOB.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE orgs (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);
CREATE INDEX orgs_created ON orgs (created_at, id);

CREATE TABLE workspaces (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs (id),
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (org_id, name)
);
CREATE INDEX workspaces_org_created ON workspaces (org_id, created_at, id);

CREATE TABLE projects (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX projects_workspace_created ON projects (workspace_id, created_at, id);

-- A project has exactly one runtime; the service deletes the runtime before
-- the project, so the reference has no cascade.
CREATE TABLE runtimes (
    id                 TEXT PRIMARY KEY,
    org_id             TEXT NOT NULL REFERENCES orgs (id),
    workspace_id       TEXT NOT NULL REFERENCES workspaces (id),
    project_id         TEXT NOT NULL UNIQUE REFERENCES projects (id),
    status             TEXT NOT NULL,
    status_reason      TEXT NOT NULL DEFAULT '',
    config             TEXT NOT NULL,
    current_sandbox_id TEXT NOT NULL DEFAULT '',
    workspace_volume   TEXT NOT NULL DEFAULT '',
    version            INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX runtimes_workspace_created ON runtimes (workspace_id, created_at, id);
CREATE INDEX runtimes_status_created ON runtimes (status, created_at, id);

-- The sandbox ledger. Rows are permanent and outlive their runtime and
-- project, so workspace_id, project_id and runtime_id are plain text.
CREATE TABLE sandboxes (
    id                  TEXT PRIMARY KEY,
    org_id              TEXT NOT NULL REFERENCES orgs (id),
    workspace_id        TEXT NOT NULL DEFAULT '',
    project_id          TEXT NOT NULL DEFAULT '',
    runtime_id          TEXT NOT NULL DEFAULT '',
    kind                TEXT NOT NULL,
    state               TEXT NOT NULL,
    pause_reason        TEXT NOT NULL DEFAULT '',
    provider            TEXT NOT NULL DEFAULT '',
    provider_sandbox_id TEXT NOT NULL DEFAULT '',
    provider_state      BLOB,
    image               TEXT NOT NULL DEFAULT '',
    cpu_millis          INTEGER NOT NULL DEFAULT 0,
    memory_mb           INTEGER NOT NULL DEFAULT 0,
    secret_ids          TEXT,
    kill_reason         TEXT NOT NULL DEFAULT '',
    error               TEXT NOT NULL DEFAULT '',
    billed_micros       INTEGER NOT NULL DEFAULT 0,
    created_at          INTEGER NOT NULL,
    started_at          INTEGER,
    paused_at           INTEGER,
    killed_at           INTEGER,
    expires_at          INTEGER,
    last_settled_at     INTEGER,
    version             INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
);
CREATE INDEX sandboxes_org_created ON sandboxes (org_id, created_at, id);
CREATE INDEX sandboxes_org_provider_id ON sandboxes (org_id, provider_sandbox_id, created_at, id);
CREATE INDEX sandboxes_runtime_created ON sandboxes (runtime_id, created_at, id);

-- org_id is NULL for an installation-wide key.
CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL DEFAULT '',
    hash       TEXT NOT NULL UNIQUE,
    prefix     TEXT NOT NULL DEFAULT '',
    role       TEXT NOT NULL,
    org_id     TEXT REFERENCES orgs (id),
    created_at INTEGER NOT NULL
);
CREATE INDEX api_keys_created ON api_keys (created_at, id);
