-- 0008: identity (PostgreSQL). Users, org memberships with roles,
-- workspace memberships by user, scoped API keys, wallet sign-in.
--
-- Free-text workspace member labels become users, as in the SQLite
-- dialect's 0008: a label with an '@' that the API would take as an email
-- address is one user per lowercased address across all orgs; any other
-- label is a name, one user per org and label; each is a member of every
-- org whose workspaces listed it, and the oldest row of a (workspace,
-- user) is kept.

CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    email      TEXT UNIQUE,
    wallet     TEXT UNIQUE,
    name       TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    CHECK (COALESCE(email, '') <> '' OR COALESCE(wallet, '') <> '' OR name <> '')
);
CREATE INDEX users_created ON users (created_at, id);

CREATE TABLE org_members (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs (id),
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (org_id, user_id)
);
CREATE INDEX org_members_org_created ON org_members (org_id, created_at, id);
CREATE INDEX org_members_user ON org_members (user_id);

CREATE TEMP TABLE migrate_labels ON COMMIT DROP AS
SELECT id, org_id, workspace_id, created_at,
       CASE WHEN is_email THEN '' ELSE org_id END AS scope,
       CASE WHEN is_email THEN lower(member) ELSE member END AS label,
       NULL::TEXT AS user_id
FROM (
    SELECT *, (strpos(member, '@') BETWEEN 2 AND 65
               AND domain <> ''
               AND strpos(domain, '@') = 0
               AND domain !~ '[^A-Za-z0-9.-]'
               AND domain !~ '^\.' AND domain !~ '\.$' AND domain !~ '\.\.') AS is_email
    FROM (SELECT *, substr(member, strpos(member, '@') + 1) AS domain FROM workspace_members) m
) l;

CREATE TEMP TABLE migrate_users ON COMMIT DROP AS
SELECT scope, label, gen_random_uuid()::TEXT AS id, MIN(created_at) AS created_at
FROM migrate_labels
GROUP BY scope, label;

UPDATE migrate_labels SET user_id = u.id
FROM migrate_users u WHERE u.scope = migrate_labels.scope AND u.label = migrate_labels.label;

INSERT INTO users (id, email, wallet, name, created_at)
SELECT id,
       CASE WHEN scope = '' THEN label END,
       NULL,
       CASE WHEN scope = '' THEN '' ELSE label END,
       created_at
FROM migrate_users;

INSERT INTO org_members (id, org_id, user_id, role, created_at)
SELECT gen_random_uuid()::TEXT, org_id, user_id, 'member', MIN(created_at)
FROM migrate_labels
GROUP BY org_id, user_id;

CREATE TABLE workspace_members_new (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, user_id)
);

INSERT INTO workspace_members_new (id, org_id, workspace_id, user_id, created_at)
SELECT id, org_id, workspace_id, user_id, created_at FROM (
    SELECT id, org_id, workspace_id, user_id, created_at,
           ROW_NUMBER() OVER (PARTITION BY workspace_id, user_id ORDER BY created_at, id) AS n
    FROM migrate_labels
) ranked
WHERE n = 1;

DROP TABLE workspace_members;
ALTER TABLE workspace_members_new RENAME TO workspace_members;
ALTER TABLE workspace_members RENAME CONSTRAINT workspace_members_new_pkey TO workspace_members_pkey;
CREATE INDEX workspace_members_created ON workspace_members (workspace_id, created_at, id);
CREATE INDEX workspace_members_user ON workspace_members (user_id);

ALTER TABLE api_keys ADD COLUMN user_id TEXT REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE api_keys ADD COLUMN workspace_id TEXT REFERENCES workspaces (id);
ALTER TABLE api_keys ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN maker_user_id TEXT REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE api_keys ADD COLUMN expires_at TIMESTAMPTZ;
ALTER TABLE api_keys ADD COLUMN revoked_at TIMESTAMPTZ;
CREATE INDEX api_keys_org_created ON api_keys (org_id, created_at, id);
CREATE INDEX api_keys_user_created ON api_keys (user_id, created_at, id);

CREATE TABLE auth_challenges (
    nonce      TEXT PRIMARY KEY,
    wallet     TEXT NOT NULL,
    message    TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX auth_challenges_expires ON auth_challenges (expires_at);

CREATE TABLE auth_sessions (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
);
CREATE INDEX auth_sessions_user ON auth_sessions (user_id);
