-- 0009: SSH keys (PostgreSQL): a user's public keys for the SSH gateway,
-- unique by fingerprint, with the scope of the API key that registered it.

CREATE TABLE ssh_keys (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL DEFAULT '',
    fingerprint  TEXT NOT NULL UNIQUE CHECK (fingerprint <> ''),
    public_key   TEXT NOT NULL CHECK (public_key <> ''),
    org_id       TEXT REFERENCES orgs (id) ON DELETE CASCADE,
    workspace_id TEXT REFERENCES workspaces (id) ON DELETE CASCADE,
    role         TEXT CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    api_key_id   TEXT REFERENCES api_keys (id) ON DELETE CASCADE,
    created_at   TIMESTAMPTZ NOT NULL,
    CHECK (workspace_id IS NULL OR org_id IS NOT NULL),
    CHECK ((org_id IS NULL) = (role IS NULL))
);
CREATE INDEX ssh_keys_user_created ON ssh_keys (user_id, created_at, id);
