-- Seats: workspace members and member limits.

-- name: AddWorkspaceMember :exec
INSERT INTO workspace_members (id, org_id, workspace_id, user_id, created_at)
VALUES ($1, $2, $3, $4, $5);

-- name: RemoveWorkspaceMember :execrows
DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2;

-- name: ListWorkspaceMembers :many
SELECT m.id, m.org_id, m.workspace_id, m.user_id, m.created_at,
       u.email AS user_email, u.wallet AS user_wallet, u.name AS user_name, u.created_at AS user_created_at
FROM workspace_members m JOIN users u ON u.id = m.user_id
WHERE m.workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (m.created_at, m.id) > (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::text))
ORDER BY m.created_at, m.id
LIMIT sqlc.arg(lim);

-- name: GetWorkspaceSeats :one
SELECT w.id, w.org_id, w.member_limit,
       (SELECT COUNT(*) FROM workspace_members m WHERE m.workspace_id = w.id) AS members
FROM workspaces w
WHERE w.id = $1;

-- name: SetWorkspaceMemberLimit :execrows
UPDATE workspaces SET member_limit = $2 WHERE id = $1;

-- name: ListWorkspacesOverMemberLimit :many
SELECT w.id, w.org_id, w.member_limit, COUNT(m.id) AS members
FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
WHERE w.member_limit > 0
GROUP BY w.id, w.org_id, w.member_limit
HAVING COUNT(m.id) > w.member_limit
ORDER BY w.id;
