package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// SettleMany settles many rows of one org as Settle would one by one, in
// a fixed handful of statements whatever the batch's size: it locks the
// rows the batch names (in id order) and then the org's account, reads
// which keys and entry ids are used, decides each settlement in memory
// (dialect.SettleBatch), and writes the entries, the rows and the account
// with one statement each, the entries and rows as arrays (unnest).
//
// The account is locked before the keys are read, so no movement of the
// org can take a key between the read and the insert. An org without an
// account has nothing to lock yet; if a concurrent first movement takes
// one of the batch's keys then, the insert fails and the whole batch with
// it (idempotency_key_reused), having changed nothing.
func (q *queries) SettleMany(ctx context.Context, orgID string, ss []store.Settlement) ([]store.JournalEntry, []error, error) {
	if err := dialect.Required(dialect.Journal, "org id", orgID); err != nil {
		return nil, nil, err
	}
	b := dialect.NewSettleBatch(orgID, ss)
	valid := b.Check()
	if len(valid) == 0 {
		entries, errs := b.Done()
		return entries, errs, nil
	}
	err := q.atomic(ctx, func(q *queries) error {
		open, err := q.lockBatch(ctx, b, valid)
		if err != nil {
			return err
		}
		for _, i := range valid {
			if err := b.Settle(i, open); err != nil {
				return err
			}
		}
		if len(b.Applied) == 0 {
			return nil // the account is as it was
		}
		es := make([]*store.JournalEntry, len(b.Applied))
		for k, i := range b.Applied {
			es[k] = &b.Entries[i]
		}
		if err := q.appendEntries(ctx, es); err != nil {
			return err
		}
		if err := q.moveWatermarks(ctx, b.Moves); err != nil {
			return err
		}
		return q.writeAccount(ctx, b.Account, b.Cur.BalanceMicros, b.Cur.HeldMicros, b.Last)
	})
	if err != nil {
		return nil, nil, err
	}
	entries, errs := b.Done()
	return entries, errs, nil
}

// lockBatch locks the billing rows the valid settlements of b name and
// the org's account, and reads which of their keys and entry ids are used.
// It returns how b opens the account: the one it locked, or a new one.
func (q *queries) lockBatch(ctx context.Context, b *dialect.SettleBatch, valid []int) (func(time.Time) (store.CreditAccount, error), error) {
	rows, err := q.q.LockBillingRows(ctx, b.Pick(valid, func(s store.Settlement) string { return s.SandboxID }))
	if err != nil {
		return nil, classify("lock sandboxes", dialect.Sandbox, err)
	}
	b.Rows = make(map[string]*store.Sandbox, len(rows))
	for _, r := range rows {
		b.Rows[r.ID] = &store.Sandbox{ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, ProjectID: r.ProjectID,
			RuntimeID: r.RuntimeID, BilledMicros: r.BilledMicros, LastSettledAt: fromOptTime(r.LastSettledAt), BillingVersion: r.BillingVersion}
	}
	a, ok, err := q.lockAccount(ctx, b.OrgID)
	if err != nil {
		return nil, err
	}
	keys, err := q.q.UsedJournalKeys(ctx, pgdb.UsedJournalKeysParams{
		OrgID: b.OrgID, Keys: b.Pick(valid, func(s store.Settlement) string { return s.IdempotencyKey }),
	})
	if err != nil {
		return nil, classify("read journal keys", dialect.Journal, err)
	}
	var ids []string
	if named := b.Pick(valid, func(s store.Settlement) string { return s.ID }); len(named) > 0 { // the settler names none
		if ids, err = q.q.UsedJournalIDs(ctx, named); err != nil {
			return nil, classify("read journal ids", dialect.Journal, err)
		}
	}
	b.Keys, b.IDs = set(keys), set(ids)
	return func(at time.Time) (store.CreditAccount, error) {
		if ok {
			return a, nil
		}
		return q.openAccount(ctx, b.OrgID, at)
	}, nil
}

// set is the set of values.
func set(values []string) map[string]bool {
	out := make(map[string]bool, len(values))
	for _, v := range values {
		out[v] = true
	}
	return out
}

// appendEntries appends es in their order, naming those without an id,
// and sets their Seq. A used idempotency key or id is ErrConflict
// (idempotency_key_reused) and appends none of them.
func (q *queries) appendEntries(ctx context.Context, es []*store.JournalEntry) error {
	var arg pgdb.AppendJournalEntriesParams
	byID := make(map[string]*store.JournalEntry, len(es))
	for _, e := range es {
		if err := dialect.NameEntry(e); err != nil {
			return err
		}
		byID[e.ID] = e
		arg.Ids, arg.OrgIds, arg.Kinds = append(arg.Ids, e.ID), append(arg.OrgIds, e.OrgID), append(arg.Kinds, string(e.Kind))
		arg.Amounts, arg.Helds = append(arg.Amounts, e.AmountMicros), append(arg.Helds, e.HeldMicros)
		arg.BalancesAfter, arg.HeldsAfter = append(arg.BalancesAfter, e.BalanceAfterMicros), append(arg.HeldsAfter, e.HeldAfterMicros)
		arg.Shortfalls, arg.SandboxIds = append(arg.Shortfalls, e.ShortfallMicros), append(arg.SandboxIds, e.SandboxID)
		arg.RuntimeIds, arg.ProjectIds = append(arg.RuntimeIds, e.RuntimeID), append(arg.ProjectIds, e.ProjectID)
		arg.WorkspaceIds = append(arg.WorkspaceIds, e.WorkspaceID)
		// The zero time is the query's NULL.
		arg.PeriodStarts, arg.PeriodEnds = append(arg.PeriodStarts, e.PeriodStart), append(arg.PeriodEnds, e.PeriodEnd)
		arg.IdempotencyKeys, arg.Notes = append(arg.IdempotencyKeys, e.IdempotencyKey), append(arg.Notes, e.Note)
		arg.Actors, arg.CreatedAts = append(arg.Actors, e.Actor), append(arg.CreatedAts, e.CreatedAt)
	}
	rows, err := q.q.AppendJournalEntries(ctx, arg)
	if err != nil {
		err = classify("append journal entries", dialect.Journal, err)
		switch {
		case errors.Is(err, errdefs.ErrConflict) && len(es) == 1:
			return dialect.KeyReused(es[0].IdempotencyKey, err)
		case errors.Is(err, errdefs.ErrConflict):
			return errdefs.Conflict("idempotency_key_reused",
				"a concurrent credit movement used an idempotency key or entry id of this batch").WithCause(err)
		}
		return err
	}
	// RETURNING's order is unspecified: seqs are matched by id.
	for _, r := range rows {
		if e := byID[r.ID]; e != nil {
			e.Seq = r.Seq
		}
	}
	if len(rows) != len(es) {
		return fmt.Errorf("postgres store: appended %d journal entries of %d", len(rows), len(es))
	}
	return nil
}

// moveWatermarks applies ms in one update, each row only at the billing
// version read. The rows are locked, so none can miss; if one ever does,
// the transaction must roll back, so it is an internal error.
func (q *queries) moveWatermarks(ctx context.Context, ms []*dialect.WatermarkMove) error {
	var arg pgdb.MoveWatermarksParams
	for _, m := range ms {
		arg.Ids, arg.Versions, arg.Billed = append(arg.Ids, m.ID), append(arg.Versions, m.Version), append(arg.Billed, m.Billed)
		arg.UpTo, arg.Settlements = append(arg.UpTo, m.UpTo), append(arg.Settlements, int64(m.Settlements))
	}
	n, err := q.q.MoveWatermarks(ctx, arg)
	if err != nil {
		return classify("settle sandboxes", dialect.Sandbox, err)
	}
	if n != int64(len(ms)) {
		return fmt.Errorf("postgres store: %d of %d locked sandboxes changed billing version", int64(len(ms))-n, len(ms))
	}
	return nil
}
