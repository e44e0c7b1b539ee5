package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// settleChunk is how many rows one read of SettleMany asks for. The
// statement always has this many slots (unused ones hold an id no row
// has), so it is prepared once per transaction whatever the batch size.
const settleChunk = 64

// SettleMany is Settle for many rows of one org: the settler's path. Each
// settlement is checked, priced against the balance and recorded exactly
// as Settle records it (same journal entry, same guarded row update), in
// order, so a later one sees the balance, hold and watermark the earlier
// ones left. What it saves is the per-row work that does not depend on the
// row: the rows are read a chunk at a time, and the account is read once,
// carried in memory and written once.
//
// A settlement Settle would refuse before changing anything (invalid,
// unknown or another org's sandbox, settlement_stale,
// idempotency_key_reused) gets that error in its slot and the others still
// apply. Any other failure is returned alone: outside InTx nothing was
// applied; inside, the caller rolls back, as after any failed write.
func (q *queries) SettleMany(ctx context.Context, orgID string, ss []store.Settlement) ([]store.JournalEntry, []error, error) {
	if err := required(resJournal, "org id", orgID); err != nil {
		return nil, nil, err
	}
	entries := make([]store.JournalEntry, len(ss))
	errs := make([]error, len(ss))
	ids := make([]string, 0, len(ss))
	for i, s := range ss {
		if s.OrgID != orgID {
			errs[i] = errdefs.InvalidArgument("invalid_settlement", "a settlement of org %q cannot be made with those of org %q", s.OrgID, orgID)
			continue
		}
		if errs[i] = checkSettlement(s); errs[i] == nil {
			ids = append(ids, s.SandboxID)
		}
	}
	if len(ids) == 0 {
		return entries, errs, nil
	}
	err := q.atomic(ctx, func(q *queries) error {
		rows, err := q.billingRows(ctx, ids)
		if err != nil {
			return err
		}
		var (
			a       store.CreditAccount // as stored, read when a settlement first needs it
			cur     store.CreditAccount // a after the settlements applied so far
			opened  bool
			applied bool
			last    time.Time // the last applied settlement's time: the account's updated_at
		)
		for i, s := range ss {
			if errs[i] != nil {
				continue
			}
			sb, ok := rows[s.SandboxID]
			if !ok || sb.OrgID != s.OrgID {
				errs[i] = notFound(resSandbox, nil)
				continue
			}
			if errs[i] = checkWatermark(*sb, s); errs[i] != nil {
				continue
			}
			at := orNow(s.At)
			if !opened {
				if a, err = q.openAccount(ctx, orgID, at); err != nil {
					return err
				}
				cur, opened = a, true
			}
			e := settlementEntry(cur, *sb, s, at)
			if err := q.appendEntry(ctx, &e); err != nil {
				if errors.Is(err, errdefs.ErrConflict) {
					errs[i] = err // the key was used: the insert changed nothing
					continue
				}
				return err
			}
			if err := q.moveWatermark(ctx, *sb, -e.AmountMicros, s.UpTo); err != nil {
				return err
			}
			// A later settlement of the same row sees this one.
			sb.BilledMicros -= e.AmountMicros
			sb.LastSettledAt = s.UpTo.Truncate(time.Microsecond).UTC()
			sb.BillingVersion++
			entries[i] = normEntry(e)
			cur.BalanceMicros, cur.HeldMicros = e.BalanceAfterMicros, e.HeldAfterMicros
			last, applied = at, true
		}
		if !applied {
			return nil // the account is as it was
		}
		return q.writeAccount(ctx, a, cur.BalanceMicros, cur.HeldMicros, last)
	})
	if err != nil {
		return nil, nil, err
	}
	return entries, errs, nil
}

// checkSettlement refuses a settlement Settle would refuse before reading
// anything.
func checkSettlement(s store.Settlement) error {
	if err := required(resJournal, "org id", s.OrgID, "sandbox id", s.SandboxID); err != nil {
		return err
	}
	if err := checkKey(s.IdempotencyKey, s.Note); err != nil {
		return err
	}
	switch {
	case s.UpTo.IsZero():
		return errdefs.InvalidArgument("invalid_settlement", "a settlement needs the time it settles up to")
	case s.ReleaseHeldMicros < 0 || s.ReleaseHeldMicros > maxBalanceMicros:
		return errdefs.InvalidArgument("invalid_settlement", "the held amount to release must be between 0 and %s credits", credits(maxBalanceMicros))
	case s.AmountMicros > maxBalanceMicros || s.AmountMicros < -maxBalanceMicros:
		return errdefs.InvalidArgument("invalid_amount", "a settlement must be at most %s credits", credits(maxBalanceMicros))
	case s.AmountMicros == 0 && s.ReleaseHeldMicros == 0:
		return errdefs.InvalidArgument("invalid_amount", "a settlement must charge, refund or release something")
	}
	return nil
}

// checkWatermark refuses s unless it starts where sb was settled up to.
func checkWatermark(sb store.Sandbox, s store.Settlement) error {
	if sb.LastSettledAt.Equal(s.From.Truncate(time.Microsecond)) {
		return nil
	}
	return errdefs.Conflict("settlement_stale",
		"sandbox %s was settled up to %s, not %s; read it again", sb.ID, sb.LastSettledAt, s.From)
}

// billingRows reads what a settlement needs of each row in ids (see
// billingRow), by id; unknown ids are absent.
func (q *queries) billingRows(ctx context.Context, ids []string) (map[string]*store.Sandbox, error) {
	out := make(map[string]*store.Sandbox, len(ids))
	args := make([]any, settleChunk)
	query := `SELECT id, org_id, workspace_id, project_id, runtime_id, billed_micros, last_settled_at, billing_version
		FROM sandboxes WHERE id IN (` + placeholders(settleChunk) + ")"
	for len(ids) > 0 {
		n := min(len(ids), settleChunk)
		for i := range args {
			args[i] = "" // no row has the empty id
			if i < n {
				args[i] = ids[i]
			}
		}
		ids = ids[n:]
		rows, err := q.query(ctx, query, args...)
		if err != nil {
			return nil, classify("read sandboxes", resSandbox, err)
		}
		got, err := collect(rows, func(sc rowScanner) (store.Sandbox, error) {
			var sb store.Sandbox
			var settled sql.NullInt64
			err := sc.Scan(&sb.ID, &sb.OrgID, &sb.WorkspaceID, &sb.ProjectID, &sb.RuntimeID, &sb.BilledMicros, &settled, &sb.BillingVersion)
			sb.LastSettledAt = fromMicros(settled)
			return sb, err
		})
		if err != nil {
			return nil, classify("read sandboxes", resSandbox, err)
		}
		for i := range got {
			out[got[i].ID] = &got[i]
		}
	}
	return out, nil
}

// query runs a many-row query on the write side, prepared when it can be.
func (q *queries) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := q.prepared(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return q.w.QueryContext(ctx, query, args...)
}

// settlementEntry is the journal entry that records s against account a
// (the org's as it stands) for row sb: a deduction takes at most what is
// available, the rest is its shortfall; a refund returns at most what the
// row was billed. The entry carries the balance and held amount after it.
func settlementEntry(a store.CreditAccount, sb store.Sandbox, s store.Settlement, at time.Time) store.JournalEntry {
	relief := min(s.ReleaseHeldMicros, a.HeldMicros)
	var moved, shortfall int64 // moved: change to the balance and, negated, to the row's bill
	kind := store.EntryDeduction
	if s.AmountMicros >= 0 {
		// A deduction takes what is available plus the hold it captures:
		// credits held for other compute stay held.
		take := min(s.AmountMicros, a.AvailableMicros()+relief)
		moved, shortfall = -take, s.AmountMicros-take
	} else {
		kind = store.EntryRefund
		moved = min(-s.AmountMicros, sb.BilledMicros, maxBalanceMicros-a.BalanceMicros)
	}
	start, end := s.From, s.UpTo
	if s.Since.After(start) && !s.Since.After(end) {
		start = s.Since
	}
	if end.Before(start) {
		start, end = end, start
	}
	return store.JournalEntry{
		ID: s.ID, OrgID: s.OrgID, Kind: kind, AmountMicros: moved, HeldMicros: -relief,
		BalanceAfterMicros: a.BalanceMicros + moved, HeldAfterMicros: a.HeldMicros - relief, ShortfallMicros: shortfall,
		SandboxID: sb.ID, RuntimeID: sb.RuntimeID, ProjectID: sb.ProjectID, WorkspaceID: sb.WorkspaceID,
		PeriodStart: start, PeriodEnd: end, IdempotencyKey: s.IdempotencyKey, Note: s.Note, CreatedAt: at,
	}
}

// moveWatermark adds billed to the row's bill and moves its watermark to
// upTo, guarded by the billing version read with it (see oneRow). It
// never touches the row's lifecycle version.
func (q *queries) moveWatermark(ctx context.Context, sb store.Sandbox, billed int64, upTo time.Time) error {
	r, err := q.exec(ctx, `UPDATE sandboxes SET billed_micros = billed_micros + ?, last_settled_at = ?,
		billing_version = billing_version + 1 WHERE id = ? AND billing_version = ?`,
		billed, micros(upTo), sb.ID, sb.BillingVersion)
	if err != nil {
		return classify("settle sandbox", resSandbox, err)
	}
	return oneRow(r, "sandbox "+sb.ID)
}
