-- 0008: identity. Users, org memberships with roles, workspace memberships
-- by user, scoped API keys that expire and are revoked, and wallet sign-in
-- (challenges and sessions).
--
-- Today's free-text workspace member labels become users: a label with an
-- '@' is an email address, one user per lowercased address across all
-- orgs; any other label is a name, one user per org and label. Each becomes
-- a member (role member) of every org whose workspaces listed it. Labels
-- that now name the same user in one workspace ("Alice@x.io" and
-- "alice@x.io") keep the oldest row. Existing API keys keep their org and
-- role; they get no user.
--
-- Migrations run in one transaction with foreign keys on. Nothing refers to
-- workspace_members, so it is rebuilt (new table, copy, drop, rename)
-- without turning them off, which a transaction could not do anyway.
-- api_keys only gains columns: ADD COLUMN accepts a REFERENCES clause
-- whose default is NULL.

CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    email      TEXT UNIQUE,
    wallet     TEXT UNIQUE,
    name       TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    CHECK (COALESCE(email, '') != '' OR COALESCE(wallet, '') != '' OR name != '')
);
CREATE INDEX users_created ON users (created_at, id);

CREATE TABLE org_members (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs (id),
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    created_at INTEGER NOT NULL,
    UNIQUE (org_id, user_id)
);
CREATE INDEX org_members_org_created ON org_members (org_id, created_at, id);
CREATE INDEX org_members_user ON org_members (user_id);

-- The old rows with the user each label becomes: scope is '' for an email
-- address and the org for a name; label is the address lowercased or the
-- name as it was. A label is an email address when the API would take it
-- as one now: one '@' after a local part of 1 to 64 characters, and a
-- domain of letters, digits, dashes and dots without empty labels. Any
-- other label (alice@, a@b@c) stays a name within its org.
CREATE TEMP TABLE migrate_labels AS
SELECT id, org_id, workspace_id, created_at,
       CASE WHEN is_email THEN '' ELSE org_id END AS scope,
       CASE WHEN is_email THEN lower(member) ELSE member END AS label,
       NULL AS user_id
FROM (
    SELECT *, (instr(member, '@') BETWEEN 2 AND 65
               AND domain <> ''
               AND instr(domain, '@') = 0
               AND domain NOT GLOB '*[^A-Za-z0-9.-]*'
               AND domain NOT GLOB '.*' AND domain NOT GLOB '*.' AND domain NOT GLOB '*..*') AS is_email
    FROM (SELECT *, substr(member, instr(member, '@') + 1) AS domain FROM workspace_members)
);

CREATE TEMP TABLE migrate_users (
    scope      TEXT NOT NULL,
    label      TEXT NOT NULL,
    id         TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (scope, label)
);

-- A UUID (version 4) from random bytes: 8-4-4-4-12 lowercase hex, the
-- version nibble 4, the variant nibble one of 8, 9, a, b. SELECT
-- expressions of a GROUP BY run once per group, so each user gets its own.
INSERT INTO migrate_users (scope, label, id, created_at)
SELECT scope, label,
       lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' ||
       substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (random() & 3), 1) ||
       substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))),
       MIN(created_at)
FROM migrate_labels
GROUP BY scope, label;

UPDATE migrate_labels SET user_id = (
    SELECT u.id FROM migrate_users u WHERE u.scope = migrate_labels.scope AND u.label = migrate_labels.label
);

INSERT INTO users (id, email, wallet, name, created_at)
SELECT id,
       CASE WHEN scope = '' THEN label END,
       NULL,
       CASE WHEN scope = '' THEN '' ELSE label END,
       created_at
FROM migrate_users;

INSERT INTO org_members (id, org_id, user_id, role, created_at)
SELECT lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' ||
       substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (random() & 3), 1) ||
       substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))),
       org_id, user_id, 'member', MIN(created_at)
FROM migrate_labels
GROUP BY org_id, user_id;

CREATE TABLE workspace_members_new (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, user_id)
);

-- The oldest row of each (workspace, user) keeps its id and time.
INSERT INTO workspace_members_new (id, org_id, workspace_id, user_id, created_at)
SELECT id, org_id, workspace_id, user_id, created_at FROM (
    SELECT id, org_id, workspace_id, user_id, created_at,
           ROW_NUMBER() OVER (PARTITION BY workspace_id, user_id ORDER BY created_at, id) AS n
    FROM migrate_labels
)
WHERE n = 1;

DROP TABLE workspace_members;
ALTER TABLE workspace_members_new RENAME TO workspace_members;
CREATE INDEX workspace_members_created ON workspace_members (workspace_id, created_at, id);
CREATE INDEX workspace_members_user ON workspace_members (user_id);

DROP TABLE migrate_labels;
DROP TABLE migrate_users;

-- A key's holder (NULL for the installation admin's and for keys made
-- before users existed), the one workspace it is narrowed to, what made it,
-- and when it expires and was revoked.
ALTER TABLE api_keys ADD COLUMN user_id TEXT REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE api_keys ADD COLUMN workspace_id TEXT REFERENCES workspaces (id);
ALTER TABLE api_keys ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
-- The user who made a key for another (an admin): the key never carries
-- more than its maker has now, and dies with the maker's membership.
ALTER TABLE api_keys ADD COLUMN maker_user_id TEXT REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE api_keys ADD COLUMN revoked_at INTEGER;
CREATE INDEX api_keys_org_created ON api_keys (org_id, created_at, id);
CREATE INDEX api_keys_user_created ON api_keys (user_id, created_at, id);

CREATE TABLE auth_challenges (
    nonce      TEXT PRIMARY KEY,
    wallet     TEXT NOT NULL,
    message    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX auth_challenges_expires ON auth_challenges (expires_at);

CREATE TABLE auth_sessions (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX auth_sessions_user ON auth_sessions (user_id);
