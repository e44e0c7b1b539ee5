-- 0009: SSH keys. A user's public keys for the SSH gateway: a key
-- authenticates its user, so its fingerprint (SHA256:<base64>, as
-- `ssh-keygen -lf` prints it) is unique across the installation. A key
-- registered with an API key keeps that key's scope: its org, its
-- workspace when narrowed, and its role as a ceiling; one registered with
-- a sign-in session has none and acts with the user's memberships.

CREATE TABLE ssh_keys (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL DEFAULT '',
    fingerprint  TEXT NOT NULL UNIQUE CHECK (fingerprint != ''),
    public_key   TEXT NOT NULL CHECK (public_key != ''),
    org_id       TEXT REFERENCES orgs (id) ON DELETE CASCADE,
    workspace_id TEXT REFERENCES workspaces (id) ON DELETE CASCADE,
    role         TEXT CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    -- The API key that registered it: the SSH key lives no longer than it
    -- (revoked, expired, its holder or maker gone from the org).
    api_key_id   TEXT REFERENCES api_keys (id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    CHECK (workspace_id IS NULL OR org_id IS NOT NULL),
    CHECK ((org_id IS NULL) = (role IS NULL))
);
CREATE INDEX ssh_keys_user_created ON ssh_keys (user_id, created_at, id);
