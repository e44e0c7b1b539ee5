-- 0005: secrets. A value is stored sealed (AES-GCM under the key named by
-- key_id); an org's own secrets have workspace_id ''.

CREATE TABLE secrets (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL,
    name         TEXT NOT NULL,
    env          TEXT NOT NULL,
    brokered     INTEGER NOT NULL,
    hosts        TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    sealed       BLOB NOT NULL,
    version      INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (org_id, workspace_id, name)
);
