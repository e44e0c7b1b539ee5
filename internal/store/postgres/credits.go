package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Credits: org accounts, the append-only journal and settlements. Where
// SQLite's single writer made read-then-write safe, a movement here locks
// what it reads: a settlement its sandbox rows first (FOR UPDATE, in id
// order), then every movement the org's account row, before it computes a
// balance. So writers on any replica queue on the account, the balance
// they read is the one they replace, and the journal insert's unique
// idempotency key is checked against every committed movement of the org.
// Rows move only if their billing version is the one read. The lock order
// (sandboxes, then the account) is the one a runtime's transactions take
// when they mark a row and then capture its hold.

// GetCreditAccount returns orgID's account; an org without movements has a
// zero one.
func (q *queries) GetCreditAccount(ctx context.Context, orgID string) (store.CreditAccount, error) {
	r, err := q.q.GetCreditAccount(ctx, orgID)
	if err != nil {
		return store.CreditAccount{}, classify("get credit account", dialect.Org, err)
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

// lockAccount locks orgID's account and returns it; ok is false when the
// org has none yet. The caller is inside a transaction.
func (q *queries) lockAccount(ctx context.Context, orgID string) (a store.CreditAccount, ok bool, err error) {
	r, err := q.q.LockCreditAccount(ctx, orgID)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.CreditAccount{}, false, nil
	}
	if err != nil {
		return store.CreditAccount{}, false, classify("lock credit account", dialect.Org, err)
	}
	return store.CreditAccount{OrgID: r.OrgID, BalanceMicros: r.BalanceMicros, HeldMicros: r.HeldMicros,
		UpdatedAt: r.UpdatedAt.UTC()}, true, nil
}

// openAccount locks orgID's account, creating it at at if the org has
// none, and returns it. An unknown org is ErrNotFound. The caller is
// inside a transaction.
func (q *queries) openAccount(ctx context.Context, orgID string, at time.Time) (store.CreditAccount, error) {
	a, ok, err := q.lockAccount(ctx, orgID)
	if err != nil || ok {
		return a, err
	}
	// Two first movements may open it at once: the second insert waits
	// for the first and does nothing, and the lock below then reads the
	// committed row.
	err = q.q.OpenCreditAccount(ctx, pgdb.OpenCreditAccountParams{OrgID: orgID, UpdatedAt: at})
	if err != nil {
		err = classify("open credit account", dialect.Org, err)
		if errors.Is(err, errdefs.ErrFailedPrecondition) {
			return store.CreditAccount{}, dialect.NotFound(dialect.Org, err)
		}
		return store.CreditAccount{}, err
	}
	a, ok, err = q.lockAccount(ctx, orgID)
	if err == nil && !ok {
		err = fmt.Errorf("postgres store: the credit account of org %s vanished as it was opened", orgID)
	}
	return a, err
}

// writeAccount stores the account's new balance and held amount, guarded
// by the old ones. The row is locked, so the guard cannot fail; if it
// ever does, the transaction must roll back, so it is an internal error.
func (q *queries) writeAccount(ctx context.Context, old store.CreditAccount, balance, held int64, at time.Time) error {
	n, err := q.q.WriteCreditAccount(ctx, pgdb.WriteCreditAccountParams{
		OrgID: old.OrgID, BalanceMicros: balance, HeldMicros: held, UpdatedAt: at,
		OldBalanceMicros: old.BalanceMicros, OldHeldMicros: old.HeldMicros,
	})
	if err != nil {
		return classify("update credit account", dialect.Org, err)
	}
	if n != 1 {
		return fmt.Errorf("postgres store: the locked credit account of org %s changed (%d rows matched)", old.OrgID, n)
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
		if err := q.appendEntries(ctx, []*store.JournalEntry{&e}); err != nil {
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
// the balance and the journal together: it is SettleMany of one.
func (q *queries) Settle(ctx context.Context, s store.Settlement) (store.JournalEntry, error) {
	entries, errs, err := q.SettleMany(ctx, s.OrgID, []store.Settlement{s})
	if err == nil {
		err = errs[0]
	}
	if err != nil {
		return store.JournalEntry{}, err
	}
	return entries[0], nil
}

// GetJournalEntryByKey returns orgID's entry with the idempotency key.
func (q *queries) GetJournalEntryByKey(ctx context.Context, orgID, key string) (store.JournalEntry, error) {
	r, err := q.q.GetJournalEntryByKey(ctx, pgdb.GetJournalEntryByKeyParams{OrgID: orgID, IdempotencyKey: key})
	if err != nil {
		return store.JournalEntry{}, classify("get journal entry", dialect.Journal, err)
	}
	return journalEntry(r), nil
}

// ListJournal lists an org's entries newest first. Its cursor holds the
// last entry's seq.
func (q *queries) ListJournal(ctx context.Context, f store.JournalFilter, page store.Page) ([]store.JournalEntry, string, error) {
	if err := dialect.CheckJournalFilter(f); err != nil {
		return nil, "", err
	}
	c, after, limit, err := dialect.ParsePage(page)
	if err != nil {
		return nil, "", err
	}
	arg := pgdb.ListJournalParams{
		OrgID: f.OrgID, SandboxID: optString(f.SandboxID), RuntimeID: optString(f.RuntimeID),
		ProjectID: optString(f.ProjectID), WorkspaceID: optString(f.WorkspaceID), Kind: optString(string(f.Kind)),
		FromAt: optTime(f.From), ToAt: optTime(f.To), Lim: int32(limit) + 1,
	}
	if after {
		seq := c.At.UnixMicro()
		arg.BeforeSeq = &seq
	}
	rows, err := q.q.ListJournal(ctx, arg)
	if err != nil {
		return nil, "", classify("list journal", dialect.Journal, err)
	}
	out, next := journalPage(rows, limit)
	return out, next, nil
}

// ListOpenHolds lists the org's holds no charge or release has closed.
func (q *queries) ListOpenHolds(ctx context.Context, orgID string, page store.Page) ([]store.JournalEntry, string, error) {
	if orgID == "" {
		return nil, "", errdefs.InvalidArgument("invalid_filter", "listing holds needs an org id")
	}
	c, after, limit, err := dialect.ParsePage(page)
	if err != nil {
		return nil, "", err
	}
	arg := pgdb.ListOpenHoldsParams{OrgID: orgID, Lim: int32(limit) + 1}
	if after {
		seq := c.At.UnixMicro()
		arg.BeforeSeq = &seq
	}
	rows, err := q.q.ListOpenHolds(ctx, arg)
	if err != nil {
		return nil, "", classify("list open holds", dialect.Journal, err)
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
	rows, err := q.q.SumUsage(ctx, pgdb.SumUsageParams{
		Daily: uq.Daily, GroupBy: string(uq.GroupBy), OrgID: uq.OrgID, FromAt: optTime(uq.From), ToAt: optTime(uq.To),
	})
	if err != nil {
		return nil, classify("sum usage", dialect.Journal, err)
	}
	out := make([]store.UsageRow, len(rows))
	for i, r := range rows {
		out[i] = store.UsageRow{Key: r.Key, ChargedMicros: r.Charged, RefundedMicros: r.Refunded,
			ShortfallMicros: r.Shortfall, Entries: r.Entries}
		if uq.Daily {
			out[i].Day = r.Day.UTC()
		}
	}
	return out, nil
}

// ListRunningSandboxes lists running rows by id after afterID, each with
// its billing fields only (see store.CreditQueries).
func (q *queries) ListRunningSandboxes(ctx context.Context, afterID string, limit int) ([]store.Sandbox, error) {
	rows, err := q.q.ListRunningSandboxes(ctx, pgdb.ListRunningSandboxesParams{
		ID: afterID, Limit: int32(dialect.RunningLimit(limit)),
	})
	if err != nil {
		return nil, classify("list running sandboxes", dialect.Sandbox, err)
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

// journalEntry maps a journal row to its entry.
func journalEntry(r pgdb.CreditJournal) store.JournalEntry {
	return store.JournalEntry{
		ID: r.ID, Seq: r.Seq, OrgID: r.OrgID, Kind: store.EntryKind(r.Kind), AmountMicros: r.AmountMicros,
		HeldMicros: r.HeldMicros, BalanceAfterMicros: r.BalanceAfterMicros, HeldAfterMicros: r.HeldAfterMicros,
		ShortfallMicros: r.ShortfallMicros, SandboxID: r.SandboxID, RuntimeID: r.RuntimeID, ProjectID: r.ProjectID,
		WorkspaceID: r.WorkspaceID, PeriodStart: fromOptTime(r.PeriodStart), PeriodEnd: fromOptTime(r.PeriodEnd),
		IdempotencyKey: r.IdempotencyKey, Note: r.Note, Actor: r.Actor, CreatedAt: r.CreatedAt.UTC(),
	}
}

// journalPage is a page of entries fetched with limit+1 rows: at most
// limit of them, and the cursor for the next page (dialect.SeqPage).
func journalPage(rows []pgdb.CreditJournal, limit int) ([]store.JournalEntry, string) {
	out := make([]store.JournalEntry, len(rows))
	for i, r := range rows {
		out[i] = journalEntry(r)
	}
	return dialect.SeqPage(out, limit)
}
