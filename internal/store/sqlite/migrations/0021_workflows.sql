-- 0021: workflows. A workflow (internal/workflow) is a named sequence of
-- steps (exec, prompt, task) run on a runtime, optionally on a schedule;
-- each run keeps every step's state. The definition (spec) and a run's
-- state are versioned JSON documents of the workflow service; the next
-- scheduled run and a run's status are columns, for the replica that
-- runs workflows to find what is due and what is unfinished.

CREATE TABLE workflows (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    runtime_id   TEXT NOT NULL REFERENCES runtimes (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    spec         TEXT NOT NULL,
    next_run_at  INTEGER,
    created_at   INTEGER NOT NULL
);
CREATE UNIQUE INDEX workflows_name ON workflows (runtime_id, name);
CREATE INDEX workflows_runtime ON workflows (runtime_id, created_at, id);
CREATE INDEX workflows_due ON workflows (next_run_at);

CREATE TABLE workflow_runs (
    id           TEXT PRIMARY KEY,
    workflow_id  TEXT NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    status       TEXT NOT NULL,
    state        TEXT NOT NULL,
    -- version fences writes: each lands only on the version it read
    -- (a cancel against a runner, an old lease holder against a new one).
    version      INTEGER NOT NULL DEFAULT 1,
    created_at   INTEGER NOT NULL
);
CREATE INDEX workflow_runs_workflow ON workflow_runs (workflow_id, created_at, id);
CREATE INDEX workflow_runs_status ON workflow_runs (status, created_at, id);
