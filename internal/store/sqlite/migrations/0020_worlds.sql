-- 0020: worlds. A world is a set of sandboxes of kind world started
-- together on one private network (internal/world). Its members (names,
-- configurations, ledger rows) are a versioned JSON document of the world
-- service; status is a column, for listing and for the start-up
-- reconciliation of worlds left starting, running or paused.

CREATE TABLE worlds (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    status       TEXT NOT NULL,
    spec         TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX worlds_workspace ON worlds (workspace_id, created_at, id);
CREATE INDEX worlds_status ON worlds (status, created_at, id);
