-- 0003: lifecycle automation. A runtime remembers the snapshot its last
-- archived sandbox was saved to; a sandbox remembers when it last started
-- or resumed (a maximum lifetime counts from there); the warm pool keeps
-- pre-provisioned compute that belongs to no org and is not in the ledger
-- until a start claims it.

ALTER TABLE runtimes ADD COLUMN snapshot TEXT NOT NULL DEFAULT '';
ALTER TABLE sandboxes ADD COLUMN running_since INTEGER;

CREATE TABLE warm_sandboxes (
    id                  TEXT PRIMARY KEY,
    template            TEXT NOT NULL,
    state               TEXT NOT NULL CHECK (state IN ('creating', 'ready')),
    provider            TEXT NOT NULL,
    provider_sandbox_id TEXT NOT NULL DEFAULT '',
    provider_state      BLOB,
    image               TEXT NOT NULL DEFAULT '',
    cpu_millis          INTEGER NOT NULL DEFAULT 0,
    memory_mb           INTEGER NOT NULL DEFAULT 0,
    workspace_volume    TEXT NOT NULL,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
);
CREATE INDEX warm_sandboxes_claim ON warm_sandboxes (template, state, created_at, id);
