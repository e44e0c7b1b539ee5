-- 0014: console sessions. A console sign-in with an API key opens a
-- session that names the key (key_id): it acts as the key, re-checked on
-- every request, so it dies with the key. Such a session's user is the
-- key's holder, none for an installation-wide key, so user_id may be
-- NULL now; a wallet session still names its user and no key.

ALTER TABLE auth_sessions ALTER COLUMN user_id DROP NOT NULL;
ALTER TABLE auth_sessions ADD COLUMN key_id TEXT REFERENCES api_keys (id) ON DELETE CASCADE;
ALTER TABLE auth_sessions ADD CONSTRAINT auth_sessions_holder CHECK (user_id IS NOT NULL OR key_id IS NOT NULL);
CREATE INDEX auth_sessions_key ON auth_sessions (key_id);
