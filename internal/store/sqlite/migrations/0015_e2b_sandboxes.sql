-- 0015: E2B sandboxes. A runtime made through the E2B-compatible surface
-- (internal/e2b) keeps here what paddock's model has no place for: the
-- template the SDK named and the sandbox's metadata (a JSON object of
-- strings). Only the runtimes with a row are E2B sandboxes; the row goes
-- with its runtime.

CREATE TABLE e2b_sandboxes (
    runtime_id   TEXT PRIMARY KEY REFERENCES runtimes (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    template_id  TEXT NOT NULL,
    metadata     TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX e2b_sandboxes_workspace ON e2b_sandboxes (workspace_id, created_at, runtime_id);
