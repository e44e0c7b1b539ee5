package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
)

// Credits: org accounts, the append-only journal and settlements. Every
// movement reads the account, computes the new balance in Go, appends the
// entry (whose unique idempotency key stops a replay before anything
// changed) and writes the account and row with guards that cannot fail
// while the transaction holds the write lock.

const (
	resJournal          = dialect.Journal
	resMember  resource = "member"
)

// atomic runs fn in one transaction: the caller's when q is already inside
// InTx, else a new IMMEDIATE one on the write connection.
func (q *queries) atomic(ctx context.Context, fn func(q *queries) error) (retErr error) {
	db, ok := q.w.(dbExec)
	if !ok {
		return fn(q)
	}
	tx, done, err := db.begin(ctx)
	defer done() // after the rollback below: the connection is free again
	if err != nil {
		return wrap("begin transaction", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
	}()
	if err := fn(newQueries(tx, tx)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return wrap("commit transaction", err)
	}
	committed = true
	return nil
}

// prepared returns query prepared on q's transaction and cached for the
// transaction's life (database/sql closes it with the transaction): the
// settler runs the same few statements hundreds of times per transaction.
// Outside a transaction, or if preparing fails, it returns nil and the
// caller runs the query unprepared (which reports any error).
func (q *queries) prepared(ctx context.Context, query string) *sql.Stmt {
	tx, ok := q.w.(txExec)
	if !ok {
		return nil
	}
	if st := q.stmts[query]; st != nil {
		return st
	}
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	if q.stmts == nil {
		q.stmts = map[string]*sql.Stmt{}
	}
	q.stmts[query] = st
	return st
}

// exec runs a write, prepared when it can be.
func (q *queries) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := q.prepared(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return q.w.ExecContext(ctx, query, args...)
}

// queryRow runs a one-row query on the write side, prepared when it can
// be.
func (q *queries) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := q.prepared(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return q.w.QueryRowContext(ctx, query, args...)
}

// GetCreditAccount returns orgID's account; an org without movements has a
// zero one.
func (q *queries) GetCreditAccount(ctx context.Context, orgID string) (store.CreditAccount, error) {
	a := store.CreditAccount{}
	var bal, held, updated sql.NullInt64
	err := q.r.QueryRowContext(ctx, `SELECT o.id, a.balance_micros, a.held_micros, a.updated_at
		FROM orgs o LEFT JOIN credit_accounts a ON a.org_id = o.id WHERE o.id = ?`, orgID).
		Scan(&a.OrgID, &bal, &held, &updated)
	if err != nil {
		return store.CreditAccount{}, classify("get credit account", resOrg, err)
	}
	a.BalanceMicros, a.HeldMicros, a.UpdatedAt = bal.Int64, held.Int64, fromMicros(updated)
	return a, nil
}

// openAccount creates orgID's account if it has none and returns it. The
// caller is inside a transaction.
func (q *queries) openAccount(ctx context.Context, orgID string, at time.Time) (store.CreditAccount, error) {
	a := store.CreditAccount{OrgID: orgID}
	var updated int64
	err := q.queryRow(ctx, "SELECT balance_micros, held_micros, updated_at FROM credit_accounts WHERE org_id = ?", orgID).
		Scan(&a.BalanceMicros, &a.HeldMicros, &updated)
	if err == nil {
		a.UpdatedAt = time.UnixMicro(updated).UTC()
		return a, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.CreditAccount{}, classify("read credit account", resOrg, err)
	}
	_, err = q.exec(ctx, `INSERT INTO credit_accounts (org_id, balance_micros, held_micros, updated_at)
		VALUES (?, 0, 0, ?)`, orgID, micros(at))
	if err != nil {
		err = classify("open credit account", resOrg, err)
		if errors.Is(err, errdefs.ErrFailedPrecondition) {
			return store.CreditAccount{}, notFound(resOrg, err)
		}
		return store.CreditAccount{}, err
	}
	a.UpdatedAt = at.Truncate(time.Microsecond).UTC()
	return a, nil
}

// writeAccount stores the account's new balance and held amount, guarded
// by the old ones (see oneRow).
func (q *queries) writeAccount(ctx context.Context, old store.CreditAccount, balance, held int64, at time.Time) error {
	r, err := q.exec(ctx, `UPDATE credit_accounts SET balance_micros = ?, held_micros = ?, updated_at = ?
		WHERE org_id = ? AND balance_micros = ? AND held_micros = ?`,
		balance, held, micros(at), old.OrgID, old.BalanceMicros, old.HeldMicros)
	if err != nil {
		return classify("update credit account", resOrg, err)
	}
	return oneRow(r, "credit account of org "+old.OrgID)
}

const journalColumns = "seq, id, org_id, kind, amount_micros, held_micros, balance_after_micros, held_after_micros, " +
	"shortfall_micros, sandbox_id, runtime_id, project_id, workspace_id, period_start, period_end, " +
	"idempotency_key, note, actor, created_at"

func scanEntry(sc rowScanner) (store.JournalEntry, error) {
	var e store.JournalEntry
	var start, end sql.NullInt64
	var created int64
	err := sc.Scan(&e.Seq, &e.ID, &e.OrgID, &e.Kind, &e.AmountMicros, &e.HeldMicros, &e.BalanceAfterMicros,
		&e.HeldAfterMicros, &e.ShortfallMicros, &e.SandboxID, &e.RuntimeID, &e.ProjectID, &e.WorkspaceID,
		&start, &end, &e.IdempotencyKey, &e.Note, &e.Actor, &created)
	if err != nil {
		return store.JournalEntry{}, err
	}
	e.PeriodStart, e.PeriodEnd = fromMicros(start), fromMicros(end)
	e.CreatedAt = time.UnixMicro(created).UTC()
	return e, nil
}

// appendEntry inserts e and sets its Seq. A used idempotency key is
// ErrConflict (idempotency_key_reused); nothing else has changed yet when
// it fails, because every movement appends before it writes.
func (q *queries) appendEntry(ctx context.Context, e *store.JournalEntry) error {
	if e.ID == "" {
		e.ID = uuid.NewString()
	}
	err := q.queryRow(ctx, "INSERT INTO credit_journal ("+strings.TrimPrefix(journalColumns, "seq, ")+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
		e.ID, e.OrgID, e.Kind, e.AmountMicros, e.HeldMicros, e.BalanceAfterMicros, e.HeldAfterMicros,
		e.ShortfallMicros, e.SandboxID, e.RuntimeID, e.ProjectID, e.WorkspaceID, optMicros(e.PeriodStart),
		optMicros(e.PeriodEnd), e.IdempotencyKey, e.Note, e.Actor, micros(e.CreatedAt)).Scan(&e.Seq)
	if err == nil {
		return nil
	}
	err = classify("append journal entry", resJournal, err)
	if errors.Is(err, errdefs.ErrConflict) {
		return dialect.KeyReused(e.IdempotencyKey, err)
	}
	return err
}

// oneRow checks that a guarded write changed exactly one row. It cannot
// fail while the transaction holds the write lock; if it ever does, the
// transaction must roll back, so it is an internal error, not a conflict a
// caller could skip.
func oneRow(r sql.Result, what string) error {
	n, err := r.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite store: write %s: %w", what, err)
	}
	if n != 1 {
		return fmt.Errorf("sqlite store: %s changed inside a transaction (%d rows matched)", what, n)
	}
	return nil
}

// PostCredit records a grant, an adjustment, a hold or a release.
func (q *queries) PostCredit(ctx context.Context, p store.CreditPosting) (store.JournalEntry, error) {
	if err := dialect.CheckPosting(p); err != nil {
		return store.JournalEntry{}, err
	}
	at := orNow(p.At)
	var e store.JournalEntry
	err := q.atomic(ctx, func(q *queries) error {
		a, err := q.openAccount(ctx, p.OrgID, at)
		if err != nil {
			return err
		}
		if e, err = dialect.PostingEntry(a, p, at); err != nil {
			return err
		}
		if err := q.appendEntry(ctx, &e); err != nil {
			return err
		}
		return q.writeAccount(ctx, a, e.BalanceAfterMicros, e.HeldAfterMicros, at)
	})
	if err != nil {
		return store.JournalEntry{}, err
	}
	return dialect.NormEntry(e), nil
}

// Settle charges or refunds one sandbox's compute and moves its watermark,
// the balance and the journal together.
func (q *queries) Settle(ctx context.Context, s store.Settlement) (store.JournalEntry, error) {
	if err := dialect.CheckSettlement(s); err != nil {
		return store.JournalEntry{}, err
	}
	at := orNow(s.At)
	var e store.JournalEntry
	err := q.atomic(ctx, func(q *queries) error {
		sb, err := q.billingRow(ctx, s.SandboxID)
		if err == nil && sb.OrgID != s.OrgID {
			err = notFound(resSandbox, nil)
		}
		if err != nil {
			return err
		}
		if err := dialect.CheckWatermark(sb, s); err != nil {
			return err
		}
		a, err := q.openAccount(ctx, s.OrgID, at)
		if err != nil {
			return err
		}
		e = dialect.SettlementEntry(a, sb, s, at)
		if err := q.appendEntry(ctx, &e); err != nil {
			return err
		}
		r, err := q.exec(ctx, `UPDATE sandboxes SET billed_micros = billed_micros + ?, last_settled_at = ?,
			billing_version = billing_version + 1 WHERE id = ? AND billing_version = ?`,
			-e.AmountMicros, micros(s.UpTo), sb.ID, sb.BillingVersion)
		if err != nil {
			return classify("settle sandbox", resSandbox, err)
		}
		if err := oneRow(r, "sandbox "+sb.ID); err != nil {
			return err
		}
		return q.writeAccount(ctx, a, e.BalanceAfterMicros, e.HeldAfterMicros, at)
	})
	if err != nil {
		return store.JournalEntry{}, err
	}
	return dialect.NormEntry(e), nil
}

// billingRow reads the fields of a ledger row a settlement needs.
func (q *queries) billingRow(ctx context.Context, id string) (store.Sandbox, error) {
	var sb store.Sandbox
	var settled sql.NullInt64
	err := q.queryRow(ctx, `SELECT id, org_id, workspace_id, project_id, runtime_id, billed_micros, last_settled_at, billing_version
		FROM sandboxes WHERE id = ?`, id).
		Scan(&sb.ID, &sb.OrgID, &sb.WorkspaceID, &sb.ProjectID, &sb.RuntimeID, &sb.BilledMicros, &settled, &sb.BillingVersion)
	if err != nil {
		return store.Sandbox{}, classify("read sandbox", resSandbox, err)
	}
	sb.LastSettledAt = fromMicros(settled)
	return sb, nil
}

// GetJournalEntryByKey returns orgID's entry with the idempotency key.
func (q *queries) GetJournalEntryByKey(ctx context.Context, orgID, key string) (store.JournalEntry, error) {
	e, err := scanEntry(q.r.QueryRowContext(ctx,
		"SELECT "+journalColumns+" FROM credit_journal WHERE org_id = ? AND idempotency_key = ?", orgID, key))
	return e, classify("get journal entry", resJournal, err)
}

// ListJournal lists an org's entries newest first. Its cursor holds the
// last entry's seq.
func (q *queries) ListJournal(ctx context.Context, f store.JournalFilter, page store.Page) ([]store.JournalEntry, string, error) {
	if err := dialect.CheckJournalFilter(f); err != nil {
		return nil, "", err
	}
	c, after, limit, err := parsePage(page)
	if err != nil {
		return nil, "", err
	}
	where := []string{"org_id = ?"}
	args := []any{f.OrgID}
	for _, cond := range []struct{ column, value string }{
		{"sandbox_id", f.SandboxID},
		{"runtime_id", f.RuntimeID},
		{"project_id", f.ProjectID},
		{"workspace_id", f.WorkspaceID},
		{"kind", string(f.Kind)},
	} {
		if cond.value != "" {
			where = append(where, cond.column+" = ?")
			args = append(args, cond.value)
		}
	}
	if !f.From.IsZero() {
		where = append(where, "created_at >= ?")
		args = append(args, micros(f.From))
	}
	if !f.To.IsZero() {
		where = append(where, "created_at < ?")
		args = append(args, micros(f.To))
	}
	if after {
		where = append(where, "seq < ?")
		args = append(args, c.at)
	}
	args = append(args, limit+1)
	rows, err := q.r.QueryContext(ctx, "SELECT "+journalColumns+" FROM credit_journal WHERE "+
		strings.Join(where, " AND ")+" ORDER BY seq DESC LIMIT ?", args...)
	if err != nil {
		return nil, "", classify("list journal", resJournal, err)
	}
	out, err := collect(rows, scanEntry)
	if err != nil {
		return nil, "", classify("list journal", resJournal, err)
	}
	if len(out) <= limit {
		return out, "", nil
	}
	out = out[:limit]
	last := out[limit-1]
	return out, dialect.SeqCursor(last), nil
}

// usageColumns are the columns SumUsage may group by.
var usageColumns = map[store.UsageGroup]string{
	"":                     "org_id",
	store.UsageByOrg:       "org_id",
	store.UsageBySandbox:   "sandbox_id",
	store.UsageByRuntime:   "runtime_id",
	store.UsageByProject:   "project_id",
	store.UsageByWorkspace: "workspace_id",
}

// SumUsage sums an org's deductions and refunds per group.
func (q *queries) SumUsage(ctx context.Context, uq store.UsageQuery) ([]store.UsageRow, error) {
	if err := dialect.CheckUsage(uq); err != nil {
		return nil, err
	}
	col := usageColumns[uq.GroupBy]
	where := []string{"org_id = ?", "kind IN ('deduction', 'refund')"}
	args := []any{uq.OrgID}
	if !uq.From.IsZero() {
		where = append(where, "created_at >= ?")
		args = append(args, micros(uq.From))
	}
	if !uq.To.IsZero() {
		where = append(where, "created_at < ?")
		args = append(args, micros(uq.To))
	}
	rows, err := q.r.QueryContext(ctx, `SELECT `+col+`,
		COALESCE(SUM(CASE WHEN kind = 'deduction' THEN -amount_micros ELSE 0 END), 0) AS charged,
		COALESCE(SUM(CASE WHEN kind = 'refund' THEN amount_micros ELSE 0 END), 0) AS refunded,
		COALESCE(SUM(shortfall_micros), 0), COUNT(*)
		FROM credit_journal WHERE `+strings.Join(where, " AND ")+`
		GROUP BY `+col+` ORDER BY charged - refunded DESC, `+col, args...)
	if err != nil {
		return nil, classify("sum usage", resJournal, err)
	}
	out, err := collect(rows, func(sc rowScanner) (store.UsageRow, error) {
		var r store.UsageRow
		err := sc.Scan(&r.Key, &r.ChargedMicros, &r.RefundedMicros, &r.ShortfallMicros, &r.Entries)
		return r, err
	})
	return out, classify("sum usage", resJournal, err)
}

// ListRunningSandboxes lists running rows by id after afterID.
func (q *queries) ListRunningSandboxes(ctx context.Context, afterID string, limit int) ([]store.Sandbox, error) {
	limit = dialect.RunningLimit(limit)
	rows, err := q.r.QueryContext(ctx, "SELECT "+sandboxColumns+
		" FROM sandboxes WHERE state = ? AND id > ? ORDER BY id LIMIT ?", store.SandboxRunning, afterID, limit)
	if err != nil {
		return nil, classify("list running sandboxes", resSandbox, err)
	}
	out, err := collect(rows, scanSandbox)
	return out, classify("list running sandboxes", resSandbox, err)
}
