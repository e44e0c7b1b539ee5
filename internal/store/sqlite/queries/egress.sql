-- Egress: the proxy's decisions, per runtime and per sandbox. Recording a
-- batch is hand-written (egress.go): one INSERT of n rows.

-- name: ListEgress :many
-- Newest first: the cursor is the last row of the page before, and the
-- next page holds what is older.
SELECT * FROM egress_decisions
WHERE runtime_id = sqlc.arg(runtime_id)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) < (CAST(sqlc.narg(after_at) AS INTEGER), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: SandboxEgress :many
-- hosts is a JSON array of strings: one statement for any number of hosts.
SELECT * FROM egress_decisions
WHERE sandbox_id = sqlc.arg(sandbox_id) AND port = sqlc.arg(port)
  AND host IN (SELECT h.value FROM json_each(CAST(sqlc.arg(hosts) AS TEXT)) h)
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL
       OR (created_at, id) > (CAST(sqlc.narg(after_at) AS INTEGER), CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: PruneEgress :execrows
DELETE FROM egress_decisions WHERE created_at < ?;
