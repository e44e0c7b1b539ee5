-- 0007: capability inventories, bindings, and agent sessions with their
-- transcripts (PostgreSQL).

CREATE TABLE capability_versions (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES orgs (id),
    name        TEXT NOT NULL,
    version     TEXT NOT NULL,
    description TEXT NOT NULL,
    digest      TEXT NOT NULL,
    contents    TEXT NOT NULL,
    bundle      BYTEA NOT NULL,
    size_bytes  BIGINT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (org_id, name, version)
);

CREATE TABLE capability_bindings (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs (id),
    runtime_id TEXT NOT NULL REFERENCES runtimes (id) ON DELETE CASCADE,
    source     TEXT NOT NULL CHECK (source IN ('catalog', 'inventory')),
    name       TEXT NOT NULL,
    version    TEXT NOT NULL,
    enabled    BOOLEAN NOT NULL,
    flags      TEXT NOT NULL,
    status     TEXT NOT NULL,
    rev        BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (runtime_id, name)
);
CREATE INDEX capability_bindings_inventory ON capability_bindings (org_id, source, name, version);

CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,
    org_id             TEXT NOT NULL REFERENCES orgs (id),
    workspace_id       TEXT NOT NULL,
    runtime_id         TEXT NOT NULL REFERENCES runtimes (id) ON DELETE CASCADE,
    kind               TEXT NOT NULL CHECK (kind IN ('prompt', 'task')),
    harness            TEXT NOT NULL,
    harness_session_id TEXT NOT NULL,
    status             TEXT NOT NULL,
    title              TEXT NOT NULL,
    turns              BIGINT NOT NULL,
    events             BIGINT NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL
);
CREATE INDEX sessions_runtime_created ON sessions (runtime_id, created_at, id);

CREATE TABLE session_events (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL,
    turn       BIGINT NOT NULL,
    type       TEXT NOT NULL,
    at         TIMESTAMPTZ NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
