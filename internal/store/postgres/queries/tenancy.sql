-- Orgs, workspaces and projects: the tenancy tree. Listings are keyset
-- pages on (created_at, id), fetched one row longer than the page.

-- name: CreateOrg :exec
INSERT INTO orgs (id, name, created_at) VALUES ($1, $2, $3);

-- name: GetOrg :one
SELECT id, name, created_at FROM orgs WHERE id = $1;

-- name: GetOrgByName :one
SELECT id, name, created_at FROM orgs WHERE name = $1;

-- name: ListOrgs :many
SELECT id, name, created_at FROM orgs
WHERE (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) > (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::text))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: CreateWorkspace :exec
INSERT INTO workspaces (id, org_id, name, created_at) VALUES ($1, $2, $3, $4);

-- name: GetWorkspace :one
SELECT id, org_id, name, created_at, member_limit FROM workspaces WHERE id = $1;

-- name: GetWorkspaceByName :one
SELECT id, org_id, name, created_at, member_limit FROM workspaces WHERE org_id = $1 AND name = $2;

-- name: ListWorkspaces :many
SELECT id, org_id, name, created_at, member_limit FROM workspaces
WHERE org_id = sqlc.arg(org_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) > (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::text))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: CreateProject :exec
INSERT INTO projects (id, org_id, workspace_id, name, description, created_at)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: GetProject :one
SELECT id, org_id, workspace_id, name, description, created_at FROM projects WHERE id = $1;

-- name: GetProjectByName :one
SELECT id, org_id, workspace_id, name, description, created_at FROM projects
WHERE workspace_id = $1 AND name = $2;

-- name: ListProjects :many
SELECT id, org_id, workspace_id, name, description, created_at FROM projects
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) > (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::text))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: DeleteProject :execrows
DELETE FROM projects WHERE id = $1;
