-- 0003: lifecycle automation (PostgreSQL): a runtime's last snapshot, a
-- sandbox's last start, and the warm pool.

ALTER TABLE runtimes ADD COLUMN snapshot TEXT NOT NULL DEFAULT '';
ALTER TABLE sandboxes ADD COLUMN running_since TIMESTAMPTZ;

CREATE TABLE warm_sandboxes (
    id                  TEXT PRIMARY KEY,
    template            TEXT NOT NULL,
    state               TEXT NOT NULL CHECK (state IN ('creating', 'ready')),
    provider            TEXT NOT NULL,
    provider_sandbox_id TEXT NOT NULL DEFAULT '',
    provider_state      BYTEA,
    image               TEXT NOT NULL DEFAULT '',
    cpu_millis          BIGINT NOT NULL DEFAULT 0,
    memory_mb           BIGINT NOT NULL DEFAULT 0,
    workspace_volume    TEXT NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL,
    updated_at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX warm_sandboxes_claim ON warm_sandboxes (template, state, created_at, id);
