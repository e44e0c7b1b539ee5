-- Credits: org accounts, the append-only journal and settlements. A
-- movement locks its org's account row (and a settlement its sandbox rows
-- first) before it reads a balance, so writers on any replica queue on the
-- row instead of computing from a stale balance.

-- name: GetCreditAccount :one
SELECT o.id AS org_id, a.balance_micros, a.held_micros, a.updated_at
FROM orgs o LEFT JOIN credit_accounts a ON a.org_id = o.id
WHERE o.id = $1;

-- name: LockCreditAccount :one
SELECT * FROM credit_accounts WHERE org_id = $1 FOR UPDATE;

-- name: OpenCreditAccount :exec
INSERT INTO credit_accounts (org_id, balance_micros, held_micros, updated_at)
VALUES ($1, 0, 0, $2)
ON CONFLICT (org_id) DO NOTHING;

-- name: WriteCreditAccount :execrows
UPDATE credit_accounts
SET balance_micros = sqlc.arg(balance_micros), held_micros = sqlc.arg(held_micros), updated_at = sqlc.arg(updated_at)
WHERE org_id = sqlc.arg(org_id)
  AND balance_micros = sqlc.arg(old_balance_micros) AND held_micros = sqlc.arg(old_held_micros);

-- name: AppendJournalEntries :many
-- AppendJournalEntries appends one entry per array element, in the arrays'
-- order (the unnests of one select list run in step), so their seqs
-- follow it. A zero time (0001-01-01 UTC) in the period arrays stands for
-- NULL: sqlc types an array's elements as not null.
INSERT INTO credit_journal (
    id, org_id, kind, amount_micros, held_micros, balance_after_micros, held_after_micros,
    shortfall_micros, sandbox_id, runtime_id, project_id, workspace_id, period_start, period_end,
    idempotency_key, note, actor, created_at
)
SELECT unnest(sqlc.arg(ids)::text[]), unnest(sqlc.arg(org_ids)::text[]), unnest(sqlc.arg(kinds)::text[]),
    unnest(sqlc.arg(amounts)::bigint[]), unnest(sqlc.arg(helds)::bigint[]),
    unnest(sqlc.arg(balances_after)::bigint[]), unnest(sqlc.arg(helds_after)::bigint[]),
    unnest(sqlc.arg(shortfalls)::bigint[]), unnest(sqlc.arg(sandbox_ids)::text[]),
    unnest(sqlc.arg(runtime_ids)::text[]), unnest(sqlc.arg(project_ids)::text[]),
    unnest(sqlc.arg(workspace_ids)::text[]),
    NULLIF(unnest(sqlc.arg(period_starts)::timestamptz[]), '0001-01-01 00:00:00+00'::timestamptz),
    NULLIF(unnest(sqlc.arg(period_ends)::timestamptz[]), '0001-01-01 00:00:00+00'::timestamptz),
    unnest(sqlc.arg(idempotency_keys)::text[]), unnest(sqlc.arg(notes)::text[]),
    unnest(sqlc.arg(actors)::text[]), unnest(sqlc.arg(created_ats)::timestamptz[])
RETURNING id, seq;

-- name: LockBillingRows :many
-- LockBillingRows locks in id order, so two batches that share rows
-- cannot each hold one the other waits for.
SELECT id, org_id, workspace_id, project_id, runtime_id, billed_micros, last_settled_at, billing_version
FROM sandboxes WHERE id = ANY(sqlc.arg(ids)::text[]) ORDER BY id FOR UPDATE;

-- name: MoveWatermarks :execrows
UPDATE sandboxes
SET billed_micros = sandboxes.billed_micros + v.billed, last_settled_at = v.up_to,
    billing_version = sandboxes.billing_version + v.settlements
FROM (
    SELECT unnest(sqlc.arg(ids)::text[]) AS id, unnest(sqlc.arg(versions)::bigint[]) AS version,
        unnest(sqlc.arg(billed)::bigint[]) AS billed, unnest(sqlc.arg(up_to)::timestamptz[]) AS up_to,
        unnest(sqlc.arg(settlements)::bigint[]) AS settlements
) AS v
WHERE sandboxes.id = v.id AND sandboxes.billing_version = v.version;

-- name: UsedJournalKeys :many
SELECT idempotency_key FROM credit_journal
WHERE org_id = sqlc.arg(org_id) AND idempotency_key = ANY(sqlc.arg(keys)::text[]);

-- name: UsedJournalIDs :many
SELECT id FROM credit_journal WHERE id = ANY(sqlc.arg(ids)::text[]);

-- name: GetJournalEntryByKey :one
SELECT * FROM credit_journal WHERE org_id = $1 AND idempotency_key = $2;

-- name: ListJournal :many
SELECT * FROM credit_journal
WHERE org_id = sqlc.arg(org_id)
  AND (sqlc.narg(sandbox_id)::text IS NULL OR sandbox_id = sqlc.narg(sandbox_id))
  AND (sqlc.narg(runtime_id)::text IS NULL OR runtime_id = sqlc.narg(runtime_id))
  AND (sqlc.narg(project_id)::text IS NULL OR project_id = sqlc.narg(project_id))
  AND (sqlc.narg(workspace_id)::text IS NULL OR workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(kind)::text IS NULL OR kind = sqlc.narg(kind))
  AND (sqlc.narg(from_at)::timestamptz IS NULL OR created_at >= sqlc.narg(from_at))
  AND (sqlc.narg(to_at)::timestamptz IS NULL OR created_at < sqlc.narg(to_at))
  AND (sqlc.narg(before_seq)::bigint IS NULL OR seq < sqlc.narg(before_seq))
ORDER BY seq DESC
LIMIT sqlc.arg(lim);

-- name: SumUsage :many
-- SumUsage groups by the column group_by names (sandbox, runtime,
-- project, workspace; anything else is the org), and with daily per UTC
-- day as well (day is the day's midnight; without daily it is the zero
-- time, 0001-01-01 UTC, for every row), earliest day first.
SELECT u.day::timestamptz AS day, u.key::text AS key, u.charged::bigint AS charged,
    u.refunded::bigint AS refunded, u.shortfall::bigint AS shortfall, u.entries::bigint AS entries
FROM (
    SELECT CASE WHEN sqlc.arg(daily)::boolean
            THEN date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
            ELSE '0001-01-01 00:00:00+00'::timestamptz
        END AS day,
        CASE sqlc.arg(group_by)::text
            WHEN 'sandbox' THEN sandbox_id
            WHEN 'runtime' THEN runtime_id
            WHEN 'project' THEN project_id
            WHEN 'workspace' THEN workspace_id
            ELSE org_id
        END AS key,
        COALESCE(SUM(CASE WHEN kind = 'deduction' THEN -amount_micros ELSE 0 END), 0) AS charged,
        COALESCE(SUM(CASE WHEN kind = 'refund' THEN amount_micros ELSE 0 END), 0) AS refunded,
        COALESCE(SUM(shortfall_micros), 0) AS shortfall,
        COUNT(*) AS entries
    FROM credit_journal
    WHERE org_id = sqlc.arg(org_id) AND kind IN ('deduction', 'refund')
      AND (sqlc.narg(from_at)::timestamptz IS NULL OR created_at >= sqlc.narg(from_at))
      AND (sqlc.narg(to_at)::timestamptz IS NULL OR created_at < sqlc.narg(to_at))
    GROUP BY 1, 2
) u
ORDER BY u.day, u.charged - u.refunded DESC, u.key;

-- name: ListOpenHolds :many
-- ListOpenHolds lists an org's holds that neither a charge nor a release
-- has closed: a hold keyed hold:S is closed by the entry keyed charge:S
-- or release:S (the org's unique keys index finds them). Newest first.
SELECT h.* FROM credit_journal h
WHERE h.org_id = sqlc.arg(org_id) AND h.kind = 'hold'
  AND (sqlc.narg(before_seq)::bigint IS NULL OR h.seq < sqlc.narg(before_seq))
  AND NOT EXISTS (
      SELECT 1 FROM credit_journal c
      WHERE c.org_id = h.org_id
        AND c.idempotency_key IN ('charge:' || substr(h.idempotency_key, 6), 'release:' || substr(h.idempotency_key, 6))
  )
ORDER BY h.seq DESC
LIMIT sqlc.arg(lim);

-- name: ListRunningSandboxes :many
-- ListRunningSandboxes is the settler's scan: only what billing reads of
-- each running row (its ids, size and billing watermarks), not the rest
-- of a wide row, which a scan of every running row would decode for
-- nothing.
SELECT id, org_id, workspace_id, project_id, runtime_id, kind, state, provider, cpu_millis, memory_mb,
    billed_micros, started_at, running_since, last_settled_at, billing_version
FROM sandboxes WHERE state = 'running' AND id > $1 ORDER BY id LIMIT $2;
