-- 0017: tasks. A task is an evaluation run (internal/task): a command run
-- in a sandbox of kind task, with its exit, output and score. What it was
-- asked (spec) and what came of it (result) are versioned JSON documents
-- of the task service; status, batch and sandbox are columns, for
-- listing and for the start-up reconciliation of unfinished tasks.

CREATE TABLE tasks (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    batch_id     TEXT NOT NULL DEFAULT '',
    sandbox_id   TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL,
    spec         TEXT NOT NULL,
    result       TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX tasks_workspace ON tasks (workspace_id, created_at, id);
CREATE INDEX tasks_batch ON tasks (batch_id, created_at, id);
CREATE INDEX tasks_status ON tasks (status, created_at, id);
