-- 0022: template builds and each org's own images. A template build
-- (internal/templatebuild) makes an image from a Dockerfile on the host's
-- engine and records how it went: state, the image (tagged for its org),
-- its digest and size, the code of a failure and the tail of its log.
-- org_images is each org's allow-list beside the installation's: an image
-- listed there may be named by that org's runtimes and templates only.

CREATE TABLE template_builds (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    template     TEXT NOT NULL CHECK (template <> ''),
    state        TEXT NOT NULL CHECK (state IN ('building', 'succeeded', 'failed')),
    image        TEXT NOT NULL CHECK (image <> ''),
    digest       TEXT NOT NULL,
    size_bytes   BIGINT NOT NULL CHECK (size_bytes >= 0),
    error_code   TEXT NOT NULL,
    log_tail     TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX template_builds_workspace ON template_builds (workspace_id, created_at, id);

CREATE TABLE org_images (
    org_id     TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    image      TEXT NOT NULL CHECK (image <> ''),
    build_id   TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org_id, image)
);
