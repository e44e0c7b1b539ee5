-- 0005: secrets (PostgreSQL). A value is stored sealed; an org's own
-- secrets have workspace_id ''.

CREATE TABLE secrets (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL,
    name         TEXT NOT NULL,
    env          TEXT NOT NULL,
    brokered     BOOLEAN NOT NULL,
    hosts        TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    sealed       BYTEA NOT NULL,
    version      BIGINT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (org_id, workspace_id, name)
);
