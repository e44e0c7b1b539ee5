-- Egress: the proxy's decisions, per runtime and per sandbox.

-- name: RecordEgress :exec
-- One statement for a whole batch: each argument is one column of the
-- batch, all of one length, and the unnests in the select list walk them
-- in step, one row per decision.
INSERT INTO egress_decisions (id, org_id, workspace_id, runtime_id, sandbox_id, created_at, allowed, reason,
    method, host, port, addr, bytes_up, bytes_down, duration_micros, brokered, refusal)
SELECT unnest(sqlc.arg(ids)::text[]), unnest(sqlc.arg(org_ids)::text[]), unnest(sqlc.arg(workspace_ids)::text[]),
    unnest(sqlc.arg(runtime_ids)::text[]), unnest(sqlc.arg(sandbox_ids)::text[]),
    unnest(sqlc.arg(created_ats)::timestamptz[]), unnest(sqlc.arg(alloweds)::boolean[]),
    unnest(sqlc.arg(reasons)::text[]), unnest(sqlc.arg(methods)::text[]), unnest(sqlc.arg(hosts)::text[]),
    unnest(sqlc.arg(ports)::bigint[]), unnest(sqlc.arg(addrs)::text[]), unnest(sqlc.arg(bytes_ups)::bigint[]),
    unnest(sqlc.arg(bytes_downs)::bigint[]), unnest(sqlc.arg(duration_micros)::bigint[]),
    unnest(sqlc.arg(brokereds)::boolean[]), unnest(sqlc.arg(refusals)::text[]);

-- name: ListEgress :many
-- Newest first: the cursor is the last row of the page before, and the
-- next page holds what is older.
SELECT * FROM egress_decisions
WHERE runtime_id = sqlc.arg(runtime_id)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::text))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(lim);

-- name: SandboxEgress :many
SELECT * FROM egress_decisions
WHERE sandbox_id = sqlc.arg(sandbox_id) AND port = sqlc.arg(port) AND host = ANY (sqlc.arg(hosts)::text[])
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (created_at, id) > (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::text))
ORDER BY created_at, id
LIMIT sqlc.arg(lim);

-- name: PruneEgress :execrows
DELETE FROM egress_decisions WHERE created_at < $1;
