package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
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

// GetCreditAccount returns orgID's account; an org without movements has a
// zero one.
func (q *queries) GetCreditAccount(ctx context.Context, orgID string) (store.CreditAccount, error) {
	r, err := q.rq.GetCreditAccount(ctx, orgID)
	if err != nil {
		return store.CreditAccount{}, classify("get credit account", resOrg, err)
	}
	a := store.CreditAccount{OrgID: r.OrgID, UpdatedAt: fromOptTime(r.UpdatedAt)}
	if r.BalanceMicros != nil {
		a.BalanceMicros = *r.BalanceMicros
	}
	if r.HeldMicros != nil {
		a.HeldMicros = *r.HeldMicros
	}
	return a, nil
}

// openAccount creates orgID's account if it has none and returns it. The
// caller is inside a transaction.
func (q *queries) openAccount(ctx context.Context, orgID string, at time.Time) (store.CreditAccount, error) {
	r, err := q.wq.ReadCreditAccount(ctx, orgID)
	if err == nil {
		return store.CreditAccount{OrgID: orgID, BalanceMicros: r.BalanceMicros, HeldMicros: r.HeldMicros,
			UpdatedAt: time.UnixMicro(r.UpdatedAt).UTC()}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.CreditAccount{}, classify("read credit account", resOrg, err)
	}
	err = q.wq.OpenCreditAccount(ctx, litedb.OpenCreditAccountParams{OrgID: orgID, UpdatedAt: micros(at)})
	if err != nil {
		err = classify("open credit account", resOrg, err)
		if errors.Is(err, errdefs.ErrFailedPrecondition) {
			return store.CreditAccount{}, notFound(resOrg, err)
		}
		return store.CreditAccount{}, err
	}
	return store.CreditAccount{OrgID: orgID, UpdatedAt: at.Truncate(time.Microsecond).UTC()}, nil
}

// writeAccount stores the account's new balance and held amount, guarded
// by the old ones (see oneRow).
func (q *queries) writeAccount(ctx context.Context, old store.CreditAccount, balance, held int64, at time.Time) error {
	n, err := q.wq.WriteCreditAccount(ctx, litedb.WriteCreditAccountParams{
		BalanceMicros: balance, HeldMicros: held, UpdatedAt: micros(at),
		OrgID: old.OrgID, OldBalanceMicros: old.BalanceMicros, OldHeldMicros: old.HeldMicros,
	})
	if err != nil {
		return classify("update credit account", resOrg, err)
	}
	return oneRow(n, "credit account of org "+old.OrgID)
}

// journalEntry maps a journal row to its entry.
func journalEntry(r litedb.CreditJournal) store.JournalEntry {
	return store.JournalEntry{
		ID: r.ID, Seq: r.Seq, OrgID: r.OrgID, Kind: store.EntryKind(r.Kind), AmountMicros: r.AmountMicros,
		HeldMicros: r.HeldMicros, BalanceAfterMicros: r.BalanceAfterMicros, HeldAfterMicros: r.HeldAfterMicros,
		ShortfallMicros: r.ShortfallMicros, SandboxID: r.SandboxID, RuntimeID: r.RuntimeID, ProjectID: r.ProjectID,
		WorkspaceID: r.WorkspaceID, PeriodStart: fromOptTime(r.PeriodStart), PeriodEnd: fromOptTime(r.PeriodEnd),
		IdempotencyKey: r.IdempotencyKey, Note: r.Note, Actor: r.Actor, CreatedAt: time.UnixMicro(r.CreatedAt).UTC(),
	}
}

// journalPage is a page of entries fetched with limit+1 rows: at most
// limit of them, and the cursor for the next page (dialect.SeqPage).
func journalPage(rows []litedb.CreditJournal, limit int) ([]store.JournalEntry, string) {
	out := make([]store.JournalEntry, len(rows))
	for i, r := range rows {
		out[i] = journalEntry(r)
	}
	return dialect.SeqPage(out, limit)
}

// appendEntry inserts e and sets its Seq. A used idempotency key is
// ErrConflict (idempotency_key_reused); nothing else has changed yet when
// it fails, because every movement appends before it writes.
func (q *queries) appendEntry(ctx context.Context, e *store.JournalEntry) error {
	if e.ID == "" {
		e.ID = uuid.NewString()
	}
	seq, err := q.wq.AppendJournalEntry(ctx, litedb.AppendJournalEntryParams{
		ID: e.ID, OrgID: e.OrgID, Kind: string(e.Kind), AmountMicros: e.AmountMicros, HeldMicros: e.HeldMicros,
		BalanceAfterMicros: e.BalanceAfterMicros, HeldAfterMicros: e.HeldAfterMicros, ShortfallMicros: e.ShortfallMicros,
		SandboxID: e.SandboxID, RuntimeID: e.RuntimeID, ProjectID: e.ProjectID, WorkspaceID: e.WorkspaceID,
		PeriodStart: optTime(e.PeriodStart), PeriodEnd: optTime(e.PeriodEnd),
		IdempotencyKey: e.IdempotencyKey, Note: e.Note, Actor: e.Actor, CreatedAt: micros(e.CreatedAt),
	})
	if err == nil {
		e.Seq = seq
		return nil
	}
	err = classify("append journal entry", resJournal, err)
	if errors.Is(err, errdefs.ErrConflict) {
		return dialect.KeyReused(e.IdempotencyKey, err)
	}
	return err
}

// oneRow checks that a guarded write changed exactly one row (n). It
// cannot fail while the transaction holds the write lock; if it ever does,
// the transaction must roll back, so it is an internal error, not a
// conflict a caller could skip.
func oneRow(n int64, what string) error {
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
		n, err := q.wq.SettleSandbox(ctx, litedb.SettleSandboxParams{
			Billed: -e.AmountMicros, UpTo: micros(s.UpTo), ID: sb.ID, BillingVersion: sb.BillingVersion,
		})
		if err != nil {
			return classify("settle sandbox", resSandbox, err)
		}
		if err := oneRow(n, "sandbox "+sb.ID); err != nil {
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
	r, err := q.wq.BillingRow(ctx, id)
	if err != nil {
		return store.Sandbox{}, classify("read sandbox", resSandbox, err)
	}
	return billingSandbox(litedb.BillingRowsRow(r)), nil
}

// billingSandbox maps the billing fields of a row to a sandbox.
func billingSandbox(r litedb.BillingRowsRow) store.Sandbox {
	return store.Sandbox{ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, ProjectID: r.ProjectID, RuntimeID: r.RuntimeID,
		BilledMicros: r.BilledMicros, LastSettledAt: fromOptTime(r.LastSettledAt), BillingVersion: r.BillingVersion}
}

// GetJournalEntryByKey returns orgID's entry with the idempotency key.
func (q *queries) GetJournalEntryByKey(ctx context.Context, orgID, key string) (store.JournalEntry, error) {
	r, err := q.rq.GetJournalEntryByKey(ctx, litedb.GetJournalEntryByKeyParams{OrgID: orgID, IdempotencyKey: key})
	if err != nil {
		return store.JournalEntry{}, classify("get journal entry", resJournal, err)
	}
	return journalEntry(r), nil
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
	arg := litedb.ListJournalParams{
		OrgID: f.OrgID, SandboxID: optString(f.SandboxID), RuntimeID: optString(f.RuntimeID),
		ProjectID: optString(f.ProjectID), WorkspaceID: optString(f.WorkspaceID), Kind: optString(string(f.Kind)),
		FromAt: optTime(f.From), ToAt: optTime(f.To), Lim: int64(limit) + 1,
	}
	if after {
		arg.BeforeSeq = &c.at
	}
	rows, err := q.listJournal(ctx, arg)
	if err != nil {
		return nil, "", classify("list journal", resJournal, err)
	}
	out, next := journalPage(rows, limit)
	return out, next, nil
}

// listJournal runs the variant of ListJournal that can use the journal's
// index by the filter set (sandbox, runtime or project; see
// queries/credits.sql).
func (q *queries) listJournal(ctx context.Context, arg litedb.ListJournalParams) ([]litedb.CreditJournal, error) {
	switch {
	case arg.SandboxID != nil:
		return q.rq.ListJournalBySandbox(ctx, litedb.ListJournalBySandboxParams(arg))
	case arg.RuntimeID != nil:
		return q.rq.ListJournalByRuntime(ctx, litedb.ListJournalByRuntimeParams(arg))
	case arg.ProjectID != nil:
		return q.rq.ListJournalByProject(ctx, litedb.ListJournalByProjectParams(arg))
	}
	return q.rq.ListJournal(ctx, arg)
}

// ListOpenHolds lists the org's holds no charge or release has closed.
func (q *queries) ListOpenHolds(ctx context.Context, orgID string, page store.Page) ([]store.JournalEntry, string, error) {
	if orgID == "" {
		return nil, "", errdefs.InvalidArgument("invalid_filter", "listing holds needs an org id")
	}
	c, after, limit, err := parsePage(page)
	if err != nil {
		return nil, "", err
	}
	arg := litedb.ListOpenHoldsParams{OrgID: orgID, Lim: int64(limit) + 1}
	if after {
		seq := c.at
		arg.BeforeSeq = &seq
	}
	rows, err := q.rq.ListOpenHolds(ctx, arg)
	if err != nil {
		return nil, "", classify("list open holds", resJournal, err)
	}
	out, next := journalPage(rows, limit)
	return out, next, nil
}

// SumUsage sums an org's deductions and refunds per group, and per UTC
// day as well with uq.Daily.
func (q *queries) SumUsage(ctx context.Context, uq store.UsageQuery) ([]store.UsageRow, error) {
	if err := dialect.CheckUsage(uq); err != nil {
		return nil, err
	}
	rows, err := q.rq.SumUsage(ctx, litedb.SumUsageParams{
		Daily: uq.Daily, GroupBy: string(uq.GroupBy), OrgID: uq.OrgID, FromAt: optTime(uq.From), ToAt: optTime(uq.To),
	})
	if err != nil {
		return nil, classify("sum usage", resJournal, err)
	}
	out := make([]store.UsageRow, len(rows))
	for i, r := range rows {
		out[i] = store.UsageRow{Key: r.GroupKey, ChargedMicros: r.Charged, RefundedMicros: r.Refunded,
			ShortfallMicros: r.Shortfall, Entries: r.Entries}
		if uq.Daily {
			out[i].Day = time.UnixMicro(r.Day).UTC()
		}
	}
	return out, nil
}

// ListRunningSandboxes lists running rows by id after afterID, each with
// its billing fields only (see store.CreditQueries).
func (q *queries) ListRunningSandboxes(ctx context.Context, afterID string, limit int) ([]store.Sandbox, error) {
	rows, err := q.rq.ListRunningSandboxes(ctx, litedb.ListRunningSandboxesParams{
		ID: afterID, Limit: int64(dialect.RunningLimit(limit)),
	})
	if err != nil {
		return nil, classify("list running sandboxes", resSandbox, err)
	}
	out := make([]store.Sandbox, len(rows))
	for i, r := range rows {
		out[i] = store.Sandbox{ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, ProjectID: r.ProjectID, RuntimeID: r.RuntimeID,
			Kind: store.SandboxKind(r.Kind), State: store.SandboxState(r.State), Provider: r.Provider,
			CPUMillis: r.CpuMillis, MemoryMB: r.MemoryMb, BilledMicros: r.BilledMicros,
			StartedAt: fromOptTime(r.StartedAt), RunningSince: fromOptTime(r.RunningSince),
			LastSettledAt: fromOptTime(r.LastSettledAt), BillingVersion: r.BillingVersion}
	}
	return out, nil
}
