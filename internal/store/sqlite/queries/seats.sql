-- Seats: workspace members and member limits.

-- name: AddWorkspaceMember :exec
INSERT INTO workspace_members (id, org_id, workspace_id, user_id, created_at)
VALUES (?, ?, ?, ?, ?);

-- name: RemoveWorkspaceMember :execrows
DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?;

-- name: ListWorkspaceMembers :many
SELECT m.id, m.org_id, m.workspace_id, m.user_id, m.created_at,
       u.email AS user_email, u.wallet AS user_wallet, u.name AS user_name, u.created_at AS user_created_at
FROM workspace_members m JOIN users u ON u.id = m.user_id
WHERE m.workspace_id = sqlc.arg(workspace_id)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (m.created_at, m.id) > (CAST(sqlc.narg(after_at) AS INTEGER), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY m.created_at, m.id
LIMIT sqlc.arg(lim);

-- name: GetWorkspaceSeats :one
SELECT w.id, w.org_id, w.member_limit,
       (SELECT COUNT(*) FROM workspace_members m WHERE m.workspace_id = w.id) AS members
FROM workspaces w
WHERE w.id = ?;

-- name: SetWorkspaceMemberLimit :execrows
UPDATE workspaces SET member_limit = sqlc.arg(member_limit) WHERE id = sqlc.arg(id);

-- name: ListWorkspacesOverMemberLimit :many
SELECT w.id, w.org_id, w.member_limit, COUNT(m.id) AS members
FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
WHERE w.member_limit > 0
GROUP BY w.id, w.org_id, w.member_limit
HAVING COUNT(m.id) > w.member_limit
ORDER BY w.id;
