-- 0004: egress (PostgreSQL): a sandbox's network mode and the proxy's
-- decisions per runtime.

ALTER TABLE sandboxes ADD COLUMN network TEXT NOT NULL DEFAULT 'none';

CREATE TABLE egress_decisions (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL,
    workspace_id    TEXT NOT NULL,
    runtime_id      TEXT NOT NULL,
    sandbox_id      TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    allowed         BOOLEAN NOT NULL,
    reason          TEXT NOT NULL,
    method          TEXT NOT NULL,
    host            TEXT NOT NULL,
    port            BIGINT NOT NULL,
    addr            TEXT NOT NULL,
    bytes_up        BIGINT NOT NULL,
    bytes_down      BIGINT NOT NULL,
    duration_micros BIGINT NOT NULL,
    brokered        BOOLEAN NOT NULL
);
CREATE INDEX egress_decisions_by_runtime ON egress_decisions (runtime_id, created_at, id);
CREATE INDEX egress_decisions_by_time ON egress_decisions (created_at);
