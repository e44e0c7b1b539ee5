-- 0004: egress. A sandbox remembers the network mode it was provisioned
-- with (its runtime's may change under it); the egress proxy's decisions
-- are kept per runtime, newest first.

ALTER TABLE sandboxes ADD COLUMN network TEXT NOT NULL DEFAULT 'none';

CREATE TABLE egress_decisions (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL,
    workspace_id    TEXT NOT NULL,
    runtime_id      TEXT NOT NULL,
    sandbox_id      TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    allowed         INTEGER NOT NULL,
    reason          TEXT NOT NULL,
    method          TEXT NOT NULL,
    host            TEXT NOT NULL,
    port            INTEGER NOT NULL,
    addr            TEXT NOT NULL,
    bytes_up        INTEGER NOT NULL,
    bytes_down      INTEGER NOT NULL,
    duration_micros INTEGER NOT NULL,
    brokered        INTEGER NOT NULL
);
CREATE INDEX egress_decisions_by_runtime ON egress_decisions (runtime_id, created_at, id);
CREATE INDEX egress_decisions_by_time ON egress_decisions (created_at);
