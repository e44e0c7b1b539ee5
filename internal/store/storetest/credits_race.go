package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// testCreditRaces holds the store to atomic money under concurrency: many
// writers deducting from one org with a small balance while others grant,
// and many holds racing for the same credits.
func testCreditRaces(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx

	t.Run("deductions and grants", func(t *testing.T) { testDeductionsAndGrantsRace(t, f) })
	t.Run("one row, many settlers", func(t *testing.T) { testSettlersRace(t, f) })
	t.Run("batches sharing rows", func(t *testing.T) { testSettleManyRace(t, f) })

	t.Run("a new org's first movements", func(t *testing.T) {
		const granters, grant = 24, 10
		o := f.org()
		errs := race(granters, func(int) error {
			_, err := s.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: grant, IdempotencyKey: uuid.NewString()})
			return err
		})
		for _, err := range errs {
			must(t, err)
		}
		f.wantAccount(o, granters*grant, 0)
	})

	t.Run("holds", func(t *testing.T) {
		const (
			holders = 100
			hold    = 30
			balance = 1000
		)
		o := f.org()
		f.post(o, store.EntryGrant, balance)
		errs := race(holders, func(int) error {
			_, err := s.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryHold, AmountMicros: hold, IdempotencyKey: uuid.NewString()})
			return err
		})
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, errdefs.ErrPaymentRequired):
				t.Fatalf("unexpected error: %v", err)
			}
		}
		equal(t, "holds placed", won, balance/hold)
		f.wantAccount(o, balance, int64(won*hold))
	})

	t.Run("one idempotency key, many writers", func(t *testing.T) {
		o := f.org()
		errs := race(20, func(int) error {
			_, err := s.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 100, IdempotencyKey: "once"})
			return err
		})
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errdefs.IsConflict(err):
				t.Fatalf("unexpected error: %v", err)
			}
		}
		equal(t, "grants applied", won, 1)
		f.wantAccount(o, 100, 0)
	})
}

// testDeductionsAndGrantsRace races settlements against grants, more than
// the balance covers, and checks that every micro charged or short is
// accounted for in the journal, the account, the rows and the usage.
func testDeductionsAndGrantsRace(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	const (
		deductors = 200
		rounds    = 5
		granters  = 20
		grant     = 200
		initial   = 1_000
	)
	o := f.org()
	w := f.workspace(o)
	t0 := f.next()
	sbs := make([]store.Sandbox, deductors)
	for i := range sbs {
		sbs[i] = f.runningSandbox(w, t0)
	}
	f.post(o, store.EntryGrant, initial)

	requested := make([]int64, deductors)
	errs := race(deductors+granters, func(i int) error {
		if i >= deductors {
			_, err := s.PostCredit(ctx, store.CreditPosting{
				OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: grant, IdempotencyKey: uuid.NewString(),
			})
			return err
		}
		sb := sbs[i]
		from := t0
		for r := range rounds {
			upTo := from.Add(time.Second)
			amount := int64(7 + (i*rounds+r)%13)
			_, err := s.Settle(ctx, store.Settlement{
				OrgID: o.ID, SandboxID: sb.ID, From: from, UpTo: upTo, AmountMicros: amount, IdempotencyKey: uuid.NewString(),
			})
			if err != nil {
				return err
			}
			requested[i] += amount
			from = upTo
		}
		return nil
	})
	for _, err := range errs {
		must(t, err)
	}

	entries := allJournal(t, f, o)
	granted, charged, shortfall, deductions := sumJournal(t, entries)
	var wanted int64
	for _, r := range requested {
		wanted += r
	}
	equal(t, "grants", granted, int64(initial+granters*grant))
	equal(t, "deductions recorded", deductions, deductors*rounds)
	equal(t, "charged + shortfall", charged+shortfall, wanted)
	if shortfall == 0 {
		t.Fatalf("the balance never ran out (charged %d of %d); the test needs a smaller balance", charged, wanted)
	}
	f.wantAccount(o, granted-charged, 0)

	var billed int64
	for _, sb := range sbs {
		got, err := s.GetSandbox(ctx, sb.ID)
		must(t, err)
		billed += got.BilledMicros
		if want := t0.Add(rounds * time.Second); !got.LastSettledAt.Equal(ts(want)) {
			t.Fatalf("sandbox settled up to %v, want %v", got.LastSettledAt, ts(want))
		}
	}
	equal(t, "billed on rows", billed, charged)
	usage, err := s.SumUsage(ctx, store.UsageQuery{OrgID: o.ID})
	must(t, err)
	equal(t, "usage", usage, []store.UsageRow{{Key: o.ID, ChargedMicros: charged, ShortfallMicros: shortfall, Entries: int64(deductors * rounds)}})
}

// allJournal is every entry of o's journal, newest first.
func allJournal(t *testing.T, f *fixture, o store.Org) []store.JournalEntry {
	t.Helper()
	var entries []store.JournalEntry
	page := store.Page{Limit: store.MaxLimit}
	for {
		es, next, err := f.s.ListJournal(f.ctx, store.JournalFilter{OrgID: o.ID}, page)
		must(t, err)
		entries = append(entries, es...)
		if next == "" {
			return entries
		}
		page.Cursor = next
	}
}

// sumJournal adds up the grants, the charges, the shortfalls and the number
// of deductions in entries, which hold nothing else and never leave a
// balance or a hold below zero.
func sumJournal(t *testing.T, entries []store.JournalEntry) (granted, charged, shortfall int64, deductions int) {
	t.Helper()
	for _, e := range entries {
		if e.BalanceAfterMicros < 0 || e.HeldAfterMicros < 0 {
			t.Fatalf("entry %d left balance %d held %d", e.Seq, e.BalanceAfterMicros, e.HeldAfterMicros)
		}
		switch e.Kind {
		case store.EntryGrant:
			granted += e.AmountMicros
		case store.EntryDeduction:
			deductions++
			charged -= e.AmountMicros
			shortfall += e.ShortfallMicros
		default:
			t.Fatalf("unexpected %s entry", e.Kind)
		}
	}
	return granted, charged, shortfall, deductions
}

// wantStale fails the test unless every error in errs is nil or a stale
// settlement, and returns how many are nil.
func wantStale(t *testing.T, errs []error) (applied int) {
	t.Helper()
	for _, err := range errs {
		if err == nil {
			applied++
			continue
		}
		if pe, ok := errdefs.Public(err); !ok || pe.Code != "settlement_stale" {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	return applied
}

// testSettlersRace races settlers of one row over the same interval, as
// settlers on two servers would: one charges it and the others find it
// settled already, so it is never charged twice.
func testSettlersRace(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	const settlers = 24
	o := f.org()
	w := f.workspace(o)
	t0 := f.next()
	sb := f.runningSandbox(w, t0)
	f.post(o, store.EntryGrant, 1000)
	errs := race(settlers, func(int) error {
		_, err := s.Settle(ctx, store.Settlement{
			OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t0.Add(time.Minute), AmountMicros: 100, IdempotencyKey: uuid.NewString(),
		})
		return err
	})
	equal(t, "settlements applied", wantStale(t, errs), 1)
	f.wantAccount(o, 900, 0)
	got, err := s.GetSandbox(ctx, sb.ID)
	must(t, err)
	equal(t, "billed, billing version", [2]int64{got.BilledMicros, got.BillingVersion}, [2]int64{100, sb.BillingVersion + 1})
}

// testSettleManyRace races batches that settle the same rows over the
// same interval, each naming them in its own order, half of them inside
// transactions: every row is charged once, by one of them, and the
// batches never wait on each other for good.
func testSettleManyRace(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	const (
		batches = 8
		rows    = 30
		amount  = 10
		initial = 1_000_000
	)
	o := f.org()
	t0 := f.next()
	sbs := make([]store.Sandbox, rows)
	for i := range sbs {
		sbs[i] = f.sandbox(o, func(sb *store.Sandbox) {
			sb.State, sb.StartedAt, sb.LastSettledAt = store.SandboxRunning, t0, t0
		})
	}
	f.post(o, store.EntryGrant, initial)
	results := make([][]error, batches)
	errs := race(batches, func(i int) error {
		ss := make([]store.Settlement, rows)
		for j := range ss {
			k := (i*7 + j) % rows // each batch starts elsewhere
			if i%2 == 1 {
				k = rows - 1 - k // and every other one runs backwards
			}
			ss[j] = store.Settlement{OrgID: o.ID, SandboxID: sbs[k].ID, From: t0, UpTo: t0.Add(time.Minute),
				AmountMicros: amount, IdempotencyKey: uuid.NewString()}
		}
		if i%2 == 0 { // as the settler does
			return s.InTx(ctx, func(q store.Queries) (err error) {
				_, results[i], err = q.SettleMany(ctx, o.ID, ss)
				return err
			})
		}
		var err error
		_, results[i], err = s.SettleMany(ctx, o.ID, ss)
		return err
	})
	total := 0
	for i, err := range errs {
		must(t, err)
		total += wantStale(t, results[i])
	}
	equal(t, "settlements applied", total, rows)
	f.wantAccount(o, initial-rows*amount, 0)
	for _, sb := range sbs {
		got, err := s.GetSandbox(ctx, sb.ID)
		must(t, err)
		equal(t, "billed, billing version", [2]int64{got.BilledMicros, got.BillingVersion}, [2]int64{amount, sb.BillingVersion + 1})
	}
	es, _, err := s.ListJournal(ctx, store.JournalFilter{OrgID: o.ID, Kind: store.EntryDeduction}, store.Page{Limit: store.MaxLimit})
	must(t, err)
	equal(t, "deductions in the journal", len(es), rows)
}
