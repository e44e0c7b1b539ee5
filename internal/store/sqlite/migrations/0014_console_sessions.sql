-- 0014: console sessions. A console sign-in with an API key opens a
-- session that names the key (key_id): it acts as the key, re-checked on
-- every request, so it dies with the key. Such a session's user is the
-- key's holder, none for an installation-wide key, so user_id may be
-- NULL now; a wallet session still names its user and no key. SQLite
-- cannot drop a NOT NULL: the table is made again (nothing refers to it).

CREATE TABLE auth_sessions_new (
    id         TEXT PRIMARY KEY,
    user_id    TEXT REFERENCES users (id) ON DELETE CASCADE,
    key_id     TEXT REFERENCES api_keys (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER,
    CHECK (user_id IS NOT NULL OR key_id IS NOT NULL)
);

INSERT INTO auth_sessions_new (id, user_id, key_id, created_at, expires_at, revoked_at)
SELECT id, user_id, NULL, created_at, expires_at, revoked_at FROM auth_sessions;

DROP TABLE auth_sessions;
ALTER TABLE auth_sessions_new RENAME TO auth_sessions;
CREATE INDEX auth_sessions_user ON auth_sessions (user_id);
CREATE INDEX auth_sessions_key ON auth_sessions (key_id);
