package dialect

import (
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// SettleBatch is one SettleMany under way: its settlements of one org,
// the rows, keys and ids they touch, and what each came to. A dialect
// makes one with NewSettleBatch, reads (and locks) what Check's valid
// settlements name into Rows, Keys and IDs, calls Settle for each valid
// one in order, then writes Entries[i] for each i in Applied, Moves and
// the account (Cur, at Last).
//
// The checks and the pricing are Settle's (CheckSettlement,
// CheckWatermark, SettlementEntry), each settlement decided in memory
// against the balance, hold and watermark the earlier ones left. Because
// a used key is known before anything is written, the entries can be
// appended together without one refusal breaking the balance chain of the
// rest.
type SettleBatch struct {
	OrgID   string
	SS      []store.Settlement
	Entries []store.JournalEntry // by settlement: the entry it wrote
	Errs    []error              // by settlement: why it was refused
	Applied []int                // the settlements that wrote an entry

	Rows      map[string]*store.Sandbox // read by the dialect; then as the settlements so far left them
	Keys, IDs map[string]bool           // idempotency keys and entry ids in use, read by the dialect

	Account store.CreditAccount // the account as stored, once opened
	Cur     store.CreditAccount // the account as the settlements so far left it
	Opened  bool
	Last    time.Time // the last applied settlement's time: the account's updated_at
	Moves   []*WatermarkMove
	moved   map[string]*WatermarkMove
}

// WatermarkMove is what a batch's settlements do to one row: add Billed to
// its bill, move its watermark to UpTo and its billing version on by
// Settlements, if that version is still Version, the one read.
type WatermarkMove struct {
	ID          string
	Version     int64
	Billed      int64
	UpTo        time.Time
	Settlements int
}

// NewSettleBatch starts a batch of ss for orgID.
func NewSettleBatch(orgID string, ss []store.Settlement) *SettleBatch {
	return &SettleBatch{OrgID: orgID, SS: ss, Entries: make([]store.JournalEntry, len(ss)), Errs: make([]error, len(ss)),
		moved: map[string]*WatermarkMove{}}
}

// Check refuses the settlements of another org, and those CheckSettlement
// refuses, and returns the others.
func (b *SettleBatch) Check() (valid []int) {
	for i, s := range b.SS {
		if s.OrgID != b.OrgID {
			b.Errs[i] = errdefs.InvalidArgument("invalid_settlement", "a settlement of org %q cannot be made with those of org %q", s.OrgID, b.OrgID)
			continue
		}
		if b.Errs[i] = CheckSettlement(s); b.Errs[i] == nil {
			valid = append(valid, i)
		}
	}
	return valid
}

// Pick returns field of the settlements idx names, leaving out empty
// values: the sandbox ids, keys or entry ids to read.
func (b *SettleBatch) Pick(idx []int, field func(store.Settlement) string) []string {
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		if v := field(b.SS[i]); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Settle applies settlement i after those before it, or records why it is
// refused: an unknown row, a stale watermark, a used key or id. open
// returns the org's account as stored, opening it at at if it has none; it
// is called once, before the first settlement that applies.
func (b *SettleBatch) Settle(i int, open func(at time.Time) (store.CreditAccount, error)) (err error) {
	s := b.SS[i]
	sb := b.Rows[s.SandboxID]
	if sb == nil || sb.OrgID != s.OrgID {
		b.Errs[i] = NotFound(Sandbox, nil)
		return nil
	}
	if b.Errs[i] = CheckWatermark(*sb, s); b.Errs[i] != nil {
		return nil
	}
	if b.Keys[s.IdempotencyKey] || b.IDs[s.ID] {
		b.Errs[i] = KeyReused(s.IdempotencyKey, nil)
		return nil
	}
	at := s.At
	if at.IsZero() {
		at = time.Now()
	}
	if !b.Opened {
		if b.Account, err = open(at); err != nil {
			return err
		}
		b.Cur, b.Opened = b.Account, true
	}
	e := SettlementEntry(b.Cur, *sb, s, at)
	if err := NameEntry(&e); err != nil {
		return err
	}
	b.Keys[e.IdempotencyKey], b.IDs[e.ID] = true, true
	b.move(sb, e.AmountMicros, s.UpTo)
	// A later settlement of the same row sees this one.
	sb.BilledMicros -= e.AmountMicros
	sb.LastSettledAt = s.UpTo.Truncate(time.Microsecond).UTC()
	b.Cur.BalanceMicros, b.Cur.HeldMicros = e.BalanceAfterMicros, e.HeldAfterMicros
	b.Entries[i], b.Last = e, at
	b.Applied = append(b.Applied, i)
	return nil
}

// move adds a settlement of amount (the balance's change) up to upTo to
// sb's watermark move.
func (b *SettleBatch) move(sb *store.Sandbox, amount int64, upTo time.Time) {
	m := b.moved[sb.ID]
	if m == nil {
		m = &WatermarkMove{ID: sb.ID, Version: sb.BillingVersion}
		b.moved[sb.ID] = m
		b.Moves = append(b.Moves, m)
	}
	m.Billed -= amount
	m.UpTo = upTo
	m.Settlements++
}

// Done gives the applied entries the precision of stored ones and returns
// the batch's results.
func (b *SettleBatch) Done() ([]store.JournalEntry, []error) {
	for _, i := range b.Applied {
		b.Entries[i] = NormEntry(b.Entries[i])
	}
	return b.Entries, b.Errs
}
