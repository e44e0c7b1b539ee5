-- name: CreateWorkflow :exec
INSERT INTO workflows (id, org_id, workspace_id, runtime_id, name, spec, next_run_at, created_at)
VALUES (sqlc.arg(id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(runtime_id), sqlc.arg(name),
        sqlc.arg(spec), sqlc.narg(next_run_at), sqlc.arg(created_at));

-- name: GetWorkflow :one
SELECT * FROM workflows WHERE id = $1;

-- name: ListWorkflows :many
SELECT * FROM workflows
WHERE runtime_id = sqlc.arg(runtime_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) > (sqlc.narg(after_at), sqlc.narg(after_id)::text))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: DeleteWorkflow :execrows
DELETE FROM workflows WHERE id = $1;

-- name: SetWorkflowNextRun :execrows
UPDATE workflows SET next_run_at = sqlc.narg(next_run_at)::timestamptz
WHERE id = sqlc.arg(id) AND next_run_at IS NOT DISTINCT FROM sqlc.narg(from_at)::timestamptz;

-- name: ListDueWorkflows :many
SELECT * FROM workflows WHERE next_run_at IS NOT NULL AND next_run_at <= sqlc.arg(at) ORDER BY next_run_at, id;

-- name: CreateWorkflowRun :exec
INSERT INTO workflow_runs (id, workflow_id, org_id, workspace_id, status, state, created_at)
VALUES (sqlc.arg(id), sqlc.arg(workflow_id), sqlc.arg(org_id), sqlc.arg(workspace_id), sqlc.arg(status),
        sqlc.arg(state), sqlc.arg(created_at));

-- name: GetWorkflowRun :one
SELECT * FROM workflow_runs WHERE id = $1;

-- name: ListWorkflowRuns :many
SELECT * FROM workflow_runs
WHERE workflow_id = sqlc.arg(workflow_id)
  AND (sqlc.narg(before_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_at)::timestamptz, sqlc.narg(before_id)::text))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: UpdateWorkflowRun :execrows
UPDATE workflow_runs SET status = sqlc.arg(status), state = sqlc.arg(state), version = version + 1
WHERE id = sqlc.arg(id) AND status = sqlc.arg(from_status) AND version = sqlc.arg(version);

-- name: ListUnfinishedWorkflowRuns :many
SELECT * FROM workflow_runs WHERE status IN ('pending', 'running') ORDER BY created_at, id;
