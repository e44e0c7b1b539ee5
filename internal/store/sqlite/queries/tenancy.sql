-- Orgs, workspaces and projects: the tenancy tree. Listings are keyset
-- pages on (created_at, id), fetched one row longer than the page.

-- name: CreateOrg :exec
INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?);

-- name: GetOrg :one
SELECT id, name, created_at FROM orgs WHERE id = ?;

-- name: GetOrgByName :one
SELECT id, name, created_at FROM orgs WHERE name = ?;

-- name: ListOrgs :many
SELECT id, name, created_at FROM orgs
WHERE (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (CAST(sqlc.narg(after_at) AS INTEGER), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: CreateWorkspace :exec
INSERT INTO workspaces (id, org_id, name, created_at) VALUES (?, ?, ?, ?);

-- name: GetWorkspace :one
SELECT id, org_id, name, created_at, member_limit FROM workspaces WHERE id = ?;

-- name: GetWorkspaceByName :one
SELECT id, org_id, name, created_at, member_limit FROM workspaces WHERE org_id = ? AND name = ?;

-- name: ListWorkspaces :many
SELECT id, org_id, name, created_at, member_limit FROM workspaces
WHERE org_id = sqlc.arg(org_id)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (CAST(sqlc.narg(after_at) AS INTEGER), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: CreateProject :exec
INSERT INTO projects (id, org_id, workspace_id, name, description, created_at)
VALUES (?, ?, ?, ?, ?, ?);

-- name: GetProject :one
SELECT id, org_id, workspace_id, name, description, created_at FROM projects WHERE id = ?;

-- name: GetProjectByName :one
SELECT id, org_id, workspace_id, name, description, created_at FROM projects
WHERE workspace_id = ? AND name = ?;

-- name: ListProjects :many
SELECT id, org_id, workspace_id, name, description, created_at FROM projects
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (CAST(sqlc.narg(after_at) AS INTEGER), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: DeleteProject :execrows
DELETE FROM projects WHERE id = ?;
