-- Credits: org accounts, the append-only journal and settlements. SQLite
-- has one writer: a movement reads the account inside its IMMEDIATE
-- transaction, so the balance it read is the one it replaces, and its
-- guarded writes cannot miss.

-- name: GetCreditAccount :one
SELECT o.id AS org_id, a.balance_micros, a.held_micros, a.updated_at
FROM orgs o LEFT JOIN credit_accounts a ON a.org_id = o.id
WHERE o.id = sqlc.arg(org_id);

-- name: ReadCreditAccount :one
SELECT balance_micros, held_micros, updated_at FROM credit_accounts WHERE org_id = ?;

-- name: OpenCreditAccount :exec
INSERT INTO credit_accounts (org_id, balance_micros, held_micros, updated_at)
VALUES (?, 0, 0, ?);

-- name: WriteCreditAccount :execrows
UPDATE credit_accounts
SET balance_micros = sqlc.arg(balance_micros), held_micros = sqlc.arg(held_micros), updated_at = sqlc.arg(updated_at)
WHERE org_id = sqlc.arg(org_id)
  AND balance_micros = sqlc.arg(old_balance_micros) AND held_micros = sqlc.arg(old_held_micros);

-- name: AppendJournalEntry :one
INSERT INTO credit_journal (
    id, org_id, kind, amount_micros, held_micros, balance_after_micros, held_after_micros,
    shortfall_micros, sandbox_id, runtime_id, project_id, workspace_id, period_start, period_end,
    idempotency_key, note, actor, created_at
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING seq;

-- name: BillingRow :one
SELECT id, org_id, workspace_id, project_id, runtime_id, billed_micros, last_settled_at, billing_version
FROM sandboxes WHERE id = ?;

-- name: BillingRows :many
-- BillingRows reads the rows whose ids the JSON array ids holds.
SELECT id, org_id, workspace_id, project_id, runtime_id, billed_micros, last_settled_at, billing_version
FROM sandboxes WHERE id IN (SELECT j.value FROM json_each(CAST(sqlc.arg(ids) AS TEXT)) AS j);

-- name: SettleSandbox :execrows
UPDATE sandboxes
SET billed_micros = billed_micros + sqlc.arg(billed), last_settled_at = CAST(sqlc.arg(up_to) AS INTEGER),
    billing_version = billing_version + 1
WHERE id = sqlc.arg(id) AND billing_version = sqlc.arg(billing_version);

-- name: UsedJournalKeys :many
-- UsedJournalKeys returns which idempotency keys of the JSON array keys
-- the org's journal holds.
SELECT idempotency_key FROM credit_journal
WHERE org_id = sqlc.arg(org_id) AND idempotency_key IN (SELECT j.value FROM json_each(CAST(sqlc.arg(keys) AS TEXT)) AS j);

-- name: UsedJournalIDs :many
-- UsedJournalIDs returns which entry ids of the JSON array ids the
-- journal holds.
SELECT id FROM credit_journal WHERE id IN (SELECT j.value FROM json_each(CAST(sqlc.arg(ids) AS TEXT)) AS j);

-- name: GetJournalEntryByKey :one
SELECT * FROM credit_journal WHERE org_id = ? AND idempotency_key = ?;

-- name: ListJournal :many
-- ListJournal lists an org's entries newest first, each filter unset
-- (NULL) or matched. A filter that may be NULL cannot pick an index, so
-- the journal's indexes by sandbox, runtime and project are used by the
-- variants below, one per filter, which take it set; their parameters are
-- ListJournal's.
SELECT * FROM credit_journal
WHERE org_id = sqlc.arg(org_id)
  AND (CAST(sqlc.narg(sandbox_id) AS TEXT) IS NULL OR sandbox_id = sqlc.narg(sandbox_id))
  AND (CAST(sqlc.narg(runtime_id) AS TEXT) IS NULL OR runtime_id = sqlc.narg(runtime_id))
  AND (CAST(sqlc.narg(project_id) AS TEXT) IS NULL OR project_id = sqlc.narg(project_id))
  AND (CAST(sqlc.narg(workspace_id) AS TEXT) IS NULL OR workspace_id = sqlc.narg(workspace_id))
  AND (CAST(sqlc.narg(kind) AS TEXT) IS NULL OR kind = sqlc.narg(kind))
  AND (CAST(sqlc.narg(from_at) AS INTEGER) IS NULL OR created_at >= sqlc.narg(from_at))
  AND (CAST(sqlc.narg(to_at) AS INTEGER) IS NULL OR created_at < sqlc.narg(to_at))
  AND (CAST(sqlc.narg(before_seq) AS INTEGER) IS NULL OR seq < sqlc.narg(before_seq))
ORDER BY seq DESC
LIMIT sqlc.arg(lim);

-- name: ListJournalBySandbox :many
SELECT * FROM credit_journal
WHERE org_id = sqlc.arg(org_id)
  AND sandbox_id = sqlc.narg(sandbox_id)
  AND (CAST(sqlc.narg(runtime_id) AS TEXT) IS NULL OR runtime_id = sqlc.narg(runtime_id))
  AND (CAST(sqlc.narg(project_id) AS TEXT) IS NULL OR project_id = sqlc.narg(project_id))
  AND (CAST(sqlc.narg(workspace_id) AS TEXT) IS NULL OR workspace_id = sqlc.narg(workspace_id))
  AND (CAST(sqlc.narg(kind) AS TEXT) IS NULL OR kind = sqlc.narg(kind))
  AND (CAST(sqlc.narg(from_at) AS INTEGER) IS NULL OR created_at >= sqlc.narg(from_at))
  AND (CAST(sqlc.narg(to_at) AS INTEGER) IS NULL OR created_at < sqlc.narg(to_at))
  AND (CAST(sqlc.narg(before_seq) AS INTEGER) IS NULL OR seq < sqlc.narg(before_seq))
ORDER BY seq DESC
LIMIT sqlc.arg(lim);

-- name: ListJournalByRuntime :many
SELECT * FROM credit_journal
WHERE org_id = sqlc.arg(org_id)
  AND (CAST(sqlc.narg(sandbox_id) AS TEXT) IS NULL OR sandbox_id = sqlc.narg(sandbox_id))
  AND runtime_id = sqlc.narg(runtime_id)
  AND (CAST(sqlc.narg(project_id) AS TEXT) IS NULL OR project_id = sqlc.narg(project_id))
  AND (CAST(sqlc.narg(workspace_id) AS TEXT) IS NULL OR workspace_id = sqlc.narg(workspace_id))
  AND (CAST(sqlc.narg(kind) AS TEXT) IS NULL OR kind = sqlc.narg(kind))
  AND (CAST(sqlc.narg(from_at) AS INTEGER) IS NULL OR created_at >= sqlc.narg(from_at))
  AND (CAST(sqlc.narg(to_at) AS INTEGER) IS NULL OR created_at < sqlc.narg(to_at))
  AND (CAST(sqlc.narg(before_seq) AS INTEGER) IS NULL OR seq < sqlc.narg(before_seq))
ORDER BY seq DESC
LIMIT sqlc.arg(lim);

-- name: ListJournalByProject :many
SELECT * FROM credit_journal
WHERE org_id = sqlc.arg(org_id)
  AND (CAST(sqlc.narg(sandbox_id) AS TEXT) IS NULL OR sandbox_id = sqlc.narg(sandbox_id))
  AND (CAST(sqlc.narg(runtime_id) AS TEXT) IS NULL OR runtime_id = sqlc.narg(runtime_id))
  AND project_id = sqlc.narg(project_id)
  AND (CAST(sqlc.narg(workspace_id) AS TEXT) IS NULL OR workspace_id = sqlc.narg(workspace_id))
  AND (CAST(sqlc.narg(kind) AS TEXT) IS NULL OR kind = sqlc.narg(kind))
  AND (CAST(sqlc.narg(from_at) AS INTEGER) IS NULL OR created_at >= sqlc.narg(from_at))
  AND (CAST(sqlc.narg(to_at) AS INTEGER) IS NULL OR created_at < sqlc.narg(to_at))
  AND (CAST(sqlc.narg(before_seq) AS INTEGER) IS NULL OR seq < sqlc.narg(before_seq))
ORDER BY seq DESC
LIMIT sqlc.arg(lim);

-- name: SumUsage :many
-- SumUsage groups by the column group_by names (sandbox, runtime,
-- project, workspace; anything else is the org), and with daily per UTC
-- day as well (day is the day's first microsecond; without daily it is 0
-- for every row), earliest day first.
SELECT CAST(CASE WHEN CAST(sqlc.arg(daily) AS BOOLEAN) THEN created_at / 86400000000 * 86400000000 ELSE 0 END AS INTEGER) AS day,
    CAST(CASE CAST(sqlc.arg(group_by) AS TEXT)
            WHEN 'sandbox' THEN sandbox_id
            WHEN 'runtime' THEN runtime_id
            WHEN 'project' THEN project_id
            WHEN 'workspace' THEN workspace_id
            ELSE org_id
        END AS TEXT) AS group_key,
    CAST(COALESCE(SUM(CASE WHEN kind = 'deduction' THEN -amount_micros ELSE 0 END), 0) AS INTEGER) AS charged,
    CAST(COALESCE(SUM(CASE WHEN kind = 'refund' THEN amount_micros ELSE 0 END), 0) AS INTEGER) AS refunded,
    CAST(COALESCE(SUM(shortfall_micros), 0) AS INTEGER) AS shortfall,
    COUNT(*) AS entries
FROM credit_journal
WHERE org_id = sqlc.arg(org_id) AND kind IN ('deduction', 'refund')
  AND (CAST(sqlc.narg(from_at) AS INTEGER) IS NULL OR created_at >= sqlc.narg(from_at))
  AND (CAST(sqlc.narg(to_at) AS INTEGER) IS NULL OR created_at < sqlc.narg(to_at))
GROUP BY 1, 2
ORDER BY day, charged - refunded DESC, group_key;

-- name: ListOpenHolds :many
-- ListOpenHolds lists an org's holds that neither a charge nor a release
-- has closed: a hold keyed hold:S is closed by the entry keyed charge:S
-- or release:S (the org's unique keys index finds them). Newest first.
SELECT h.* FROM credit_journal h
WHERE h.org_id = sqlc.arg(org_id) AND h.kind = 'hold'
  AND (CAST(sqlc.narg(before_seq) AS INTEGER) IS NULL OR h.seq < sqlc.narg(before_seq))
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
FROM sandboxes WHERE state = 'running' AND id > ? ORDER BY id LIMIT ?;
