-- 0001: the initial schema (PostgreSQL). The same list of migrations as
-- the SQLite dialect's, version for version; see that tree for the why of
-- each table.
--
-- Conventions: ids are TEXT (UUID strings); times are TIMESTAMPTZ with
-- microsecond precision, NULL when unset; JSON documents are TEXT, kept
-- byte for byte as the store wrote them (the store never queries inside
-- one); opaque bytes are BYTEA; flags are BOOLEAN; counts and micro-credit
-- amounts are BIGINT.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE orgs (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX orgs_created ON orgs (created_at, id);

CREATE TABLE workspaces (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs (id),
    name       TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (org_id, name)
);
CREATE INDEX workspaces_org_created ON workspaces (org_id, created_at, id);

CREATE TABLE projects (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX projects_workspace_created ON projects (workspace_id, created_at, id);

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
    version            BIGINT NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL
);
CREATE INDEX runtimes_workspace_created ON runtimes (workspace_id, created_at, id);
CREATE INDEX runtimes_status_created ON runtimes (status, created_at, id);

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
    provider_state      BYTEA,
    image               TEXT NOT NULL DEFAULT '',
    cpu_millis          BIGINT NOT NULL DEFAULT 0,
    memory_mb           BIGINT NOT NULL DEFAULT 0,
    secret_ids          TEXT,
    kill_reason         TEXT NOT NULL DEFAULT '',
    error               TEXT NOT NULL DEFAULT '',
    billed_micros       BIGINT NOT NULL DEFAULT 0,
    created_at          TIMESTAMPTZ NOT NULL,
    started_at          TIMESTAMPTZ,
    paused_at           TIMESTAMPTZ,
    killed_at           TIMESTAMPTZ,
    expires_at          TIMESTAMPTZ,
    last_settled_at     TIMESTAMPTZ,
    version             BIGINT NOT NULL,
    updated_at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX sandboxes_org_created ON sandboxes (org_id, created_at, id);
CREATE INDEX sandboxes_org_provider_id ON sandboxes (org_id, provider_sandbox_id, created_at, id);
CREATE INDEX sandboxes_runtime_created ON sandboxes (runtime_id, created_at, id);

CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL DEFAULT '',
    hash       TEXT NOT NULL UNIQUE,
    prefix     TEXT NOT NULL DEFAULT '',
    role       TEXT NOT NULL,
    org_id     TEXT REFERENCES orgs (id),
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX api_keys_created ON api_keys (created_at, id);
