package dialect

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Credits: the rules of money every dialect applies the same way. A
// dialect locks (or, in SQLite, holds the write lock on) an org's account
// and the rows a settlement moves, then asks these functions what the
// movement is, appends the entry and writes what it says.

// Journal is the record of the credit journal.
const Journal Resource = "journal_entry"

// MaxBalanceMicros bounds a balance far below int64 overflow (about
// 4.6e12 credits).
const MaxBalanceMicros = int64(1) << 62

// Bounds of idempotency keys and notes.
const (
	maxKeyLen  = 255
	maxNoteLen = 1024
)

// CheckKey validates an idempotency key and a note.
func CheckKey(key, note string) error {
	switch {
	case key == "":
		return errdefs.InvalidArgument("invalid_idempotency_key", "an idempotency key is required")
	case len(key) > maxKeyLen:
		return errdefs.InvalidArgument("invalid_idempotency_key", "the idempotency key is longer than %d bytes", maxKeyLen)
	case len(note) > maxNoteLen:
		return errdefs.InvalidArgument("invalid_note", "the note is longer than %d bytes", maxNoteLen)
	}
	return nil
}

// credits formats micro-credits for a public message.
func credits(m int64) string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	return fmt.Sprintf("%s%d.%06d", sign, m/1_000_000, m%1_000_000)
}

// CheckPosting refuses a posting PostCredit refuses before reading
// anything.
func CheckPosting(p store.CreditPosting) error {
	if err := Required(Journal, "org id", p.OrgID); err != nil {
		return err
	}
	if err := CheckKey(p.IdempotencyKey, p.Note); err != nil {
		return err
	}
	switch {
	case p.Kind == store.EntryAdjustment && (p.AmountMicros < 0 || p.AmountMicros > MaxBalanceMicros):
		return errdefs.InvalidArgument("invalid_amount", "a balance must be between 0 and %s credits", credits(MaxBalanceMicros))
	case p.Kind == store.EntryAdjustment:
	case p.Kind == store.EntryGrant, p.Kind == store.EntryHold, p.Kind == store.EntryRelease:
		if p.AmountMicros <= 0 || p.AmountMicros > MaxBalanceMicros {
			return errdefs.InvalidArgument("invalid_amount", "a %s must be a positive amount of at most %s credits", p.Kind, credits(MaxBalanceMicros))
		}
	default:
		return errdefs.InvalidArgument("invalid_entry_kind", "PostCredit records grants, adjustments, holds and releases, not %q", p.Kind)
	}
	return nil
}

// PostingEntry is the journal entry that records p, checked by
// CheckPosting, against account a (the org's as it stands) at at, with the
// balance and held amount after it. A grant past MaxBalanceMicros is
// ErrInvalidArgument (balance_overflow); a hold of more than is available,
// ErrPaymentRequired (insufficient_credits).
func PostingEntry(a store.CreditAccount, p store.CreditPosting, at time.Time) (store.JournalEntry, error) {
	balance, held := a.BalanceMicros, a.HeldMicros
	switch p.Kind {
	case store.EntryGrant:
		if p.AmountMicros > MaxBalanceMicros-balance {
			return store.JournalEntry{}, errdefs.InvalidArgument("balance_overflow", "the balance would exceed %s credits", credits(MaxBalanceMicros))
		}
		balance += p.AmountMicros
	case store.EntryAdjustment:
		balance = p.AmountMicros
		held = min(held, balance) // holds never exceed the balance
	case store.EntryHold:
		if avail := a.AvailableMicros(); avail < p.AmountMicros {
			return store.JournalEntry{}, errdefs.PaymentRequired("insufficient_credits",
				"the org has %s credits available and this needs %s", credits(avail), credits(p.AmountMicros))
		}
		held += p.AmountMicros
	case store.EntryRelease:
		held -= min(p.AmountMicros, held)
	}
	return store.JournalEntry{
		ID: p.ID, OrgID: p.OrgID, Kind: p.Kind,
		AmountMicros: balance - a.BalanceMicros, HeldMicros: held - a.HeldMicros,
		BalanceAfterMicros: balance, HeldAfterMicros: held,
		SandboxID: p.SandboxID, RuntimeID: p.RuntimeID, ProjectID: p.ProjectID, WorkspaceID: p.WorkspaceID,
		IdempotencyKey: p.IdempotencyKey, Note: p.Note, Actor: p.Actor, CreatedAt: at,
	}, nil
}

// CheckSettlement refuses a settlement Settle refuses before reading
// anything.
func CheckSettlement(s store.Settlement) error {
	if err := Required(Journal, "org id", s.OrgID, "sandbox id", s.SandboxID); err != nil {
		return err
	}
	if err := CheckKey(s.IdempotencyKey, s.Note); err != nil {
		return err
	}
	switch {
	case s.UpTo.IsZero():
		return errdefs.InvalidArgument("invalid_settlement", "a settlement needs the time it settles up to")
	case s.ReleaseHeldMicros < 0 || s.ReleaseHeldMicros > MaxBalanceMicros:
		return errdefs.InvalidArgument("invalid_settlement", "the held amount to release must be between 0 and %s credits", credits(MaxBalanceMicros))
	case s.AmountMicros > MaxBalanceMicros || s.AmountMicros < -MaxBalanceMicros:
		return errdefs.InvalidArgument("invalid_amount", "a settlement must be at most %s credits", credits(MaxBalanceMicros))
	case s.AmountMicros == 0 && s.ReleaseHeldMicros == 0:
		return errdefs.InvalidArgument("invalid_amount", "a settlement must charge, refund or release something")
	}
	return nil
}

// CheckWatermark refuses s unless it starts where sb was settled up to.
func CheckWatermark(sb store.Sandbox, s store.Settlement) error {
	if sb.LastSettledAt.Equal(s.From.Truncate(time.Microsecond)) {
		return nil
	}
	return errdefs.Conflict("settlement_stale",
		"sandbox %s was settled up to %s, not %s; read it again", sb.ID, sb.LastSettledAt, s.From)
}

// KeyReused is the refusal of an entry whose idempotency key (or id) the
// journal already holds.
func KeyReused(key string, cause error) error {
	e := errdefs.Conflict("idempotency_key_reused",
		"idempotency key %q was already used for another credit movement of this org", key)
	if cause != nil {
		return e.WithCause(cause)
	}
	return e
}

// SettlementEntry is the journal entry that records s against account a
// (the org's as it stands) for row sb: a deduction takes at most what is
// available plus the hold it captures, the rest is its shortfall; a refund
// returns at most what the row was billed. It carries the balance and held
// amount after it.
func SettlementEntry(a store.CreditAccount, sb store.Sandbox, s store.Settlement, at time.Time) store.JournalEntry {
	relief := min(s.ReleaseHeldMicros, a.HeldMicros)
	var moved, shortfall int64 // moved: change to the balance and, negated, to the row's bill
	kind := store.EntryDeduction
	if s.AmountMicros >= 0 {
		// Credits held for other compute stay held.
		take := min(s.AmountMicros, a.AvailableMicros()+relief)
		moved, shortfall = -take, s.AmountMicros-take
	} else {
		kind = store.EntryRefund
		moved = min(-s.AmountMicros, sb.BilledMicros, MaxBalanceMicros-a.BalanceMicros)
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

// NameEntry gives e a time-ordered id (UUIDv7) unless it has one, so the
// journal's id index grows at its end.
func NameEntry(e *store.JournalEntry) error {
	if e.ID != "" {
		return nil
	}
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("name journal entry: %w", err)
	}
	e.ID = id.String()
	return nil
}

// NormEntry gives an entry built in memory the precision of a stored one.
func NormEntry(e store.JournalEntry) store.JournalEntry {
	for _, t := range []*time.Time{&e.PeriodStart, &e.PeriodEnd, &e.CreatedAt} {
		if !t.IsZero() {
			*t = t.Truncate(time.Microsecond).UTC()
		}
	}
	return e
}

// CheckJournalFilter refuses a journal filter without an org.
func CheckJournalFilter(f store.JournalFilter) error {
	if f.OrgID == "" {
		return errdefs.InvalidArgument("invalid_journal_filter", "the journal filter needs an org id")
	}
	return nil
}

// SeqPage trims a page of the journal fetched with limit+1 entries to
// limit and returns the cursor for the next page ("" when this page is
// the last): the last listed entry's seq, in Cursor's wire form (the seq
// where Cursor has micros).
func SeqPage(entries []store.JournalEntry, limit int) ([]store.JournalEntry, string) {
	return NextCursor(entries, limit, func(e store.JournalEntry) (time.Time, string) {
		return time.UnixMicro(e.Seq), e.ID
	})
}

// CheckUsage refuses a usage query without an org or with an unknown
// group.
func CheckUsage(q store.UsageQuery) error {
	switch q.GroupBy {
	case "", store.UsageByOrg, store.UsageBySandbox, store.UsageByRuntime, store.UsageByProject, store.UsageByWorkspace:
	default:
		return errdefs.InvalidArgument("invalid_group_by", "usage groups by sandbox, runtime, project, workspace or org, not %q", q.GroupBy)
	}
	if q.OrgID == "" {
		return errdefs.InvalidArgument("invalid_usage_query", "the usage query needs an org id")
	}
	return nil
}

// RunningLimit is ListRunningSandboxes' page size for a requested limit.
func RunningLimit(limit int) int {
	if limit <= 0 {
		limit = store.DefaultLimit
	}
	return min(limit, 10*store.MaxLimit)
}
