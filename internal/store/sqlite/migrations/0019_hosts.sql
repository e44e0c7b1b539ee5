-- 0019: hosts. A machine an org brought (`paddock host add`): sshd at
-- address, logged in as ssh_user with a private key sealed as secrets are
-- (key_id names the secrets key, sealed_key the seal, bound to the row),
-- its host key pinned (host_key, one line as authorized_keys writes it).
-- docker_socket, run_dir and disk_dir are paths on the machine. It backs
-- the ssh provider named host-<id>, which only its org's runtimes use.

CREATE TABLE hosts (
    id            TEXT PRIMARY KEY,
    org_id        TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name          TEXT NOT NULL CHECK (name != ''),
    address       TEXT NOT NULL CHECK (address != ''),
    ssh_user      TEXT NOT NULL CHECK (ssh_user != ''),
    host_key      TEXT NOT NULL CHECK (host_key != ''),
    key_id        TEXT NOT NULL,
    sealed_key    BLOB NOT NULL,
    docker_socket TEXT NOT NULL,
    run_dir       TEXT NOT NULL,
    disk_dir      TEXT NOT NULL,
    -- Auto-teardown: after idle_teardown_seconds (0: never) with no
    -- sandbox running on it since last_used_at, paddock archives what it
    -- has there, removes its run directory, runs teardown_command over
    -- SSH and hangs up: state torn_down until a sandbox runs there again.
    idle_teardown_seconds BIGINT NOT NULL DEFAULT 0 CHECK (idle_teardown_seconds >= 0),
    teardown_command TEXT NOT NULL DEFAULT '',
    -- What each sandbox on it is billed, in micro-credits per hour, in
    -- place of the resource rate (0: the resource rate).
    cost_per_hour_micros BIGINT NOT NULL DEFAULT 0 CHECK (cost_per_hour_micros >= 0),
    state         TEXT NOT NULL DEFAULT 'ready' CHECK (state IN ('ready', 'torn_down')),
    last_used_at  INTEGER NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    UNIQUE (org_id, name)
);
CREATE INDEX hosts_org ON hosts (org_id, created_at, id);
