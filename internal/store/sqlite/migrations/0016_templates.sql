-- 0016: templates. A template names what a project's runtime starts
-- from: a runtime config (the same JSON document as runtimes.config,
-- holding only the fields the template sets) kept under a name in a
-- workspace. A project made from one copies it: nothing refers to a
-- template once the project exists, so a template is deleted freely.

CREATE TABLE templates (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    config       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX templates_workspace_created ON templates (workspace_id, created_at, id);
