-- name: CreateTask :exec
INSERT INTO tasks (id, org_id, workspace_id, batch_id, sandbox_id, status, spec, result, created_at, runner)
VALUES (sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(batch_id), sqlc.arg(sandbox_id),
        sqlc.arg(status), sqlc.arg(spec), sqlc.arg(result), sqlc.arg(created_at), sqlc.arg(runner));

-- name: GetTask :one
SELECT * FROM tasks WHERE id = ?;

-- name: ListTasks :many
SELECT * FROM tasks
WHERE workspace_id = sqlc.arg(workspace_id)
  AND (sqlc.arg(batch_id) = '' OR batch_id = sqlc.arg(batch_id))
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (sqlc.narg(after_at), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: UpdateTask :execrows
UPDATE tasks SET status = sqlc.arg(status), sandbox_id = sqlc.arg(sandbox_id), result = sqlc.arg(result)
WHERE id = sqlc.arg(id) AND status = sqlc.arg(from_status);

-- name: ListUnfinishedTasks :many
SELECT * FROM tasks WHERE status IN ('pending', 'running') ORDER BY created_at, id;
