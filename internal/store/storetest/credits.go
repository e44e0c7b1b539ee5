package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// post records a credit movement of org or fails the test.
func (f *fixture) post(o store.Org, kind store.EntryKind, amount int64) store.JournalEntry {
	f.t.Helper()
	e, err := f.s.PostCredit(f.ctx, store.CreditPosting{
		OrgID: o.ID, Kind: kind, AmountMicros: amount, IdempotencyKey: uuid.NewString(), At: f.next(),
	})
	must(f.t, err)
	return e
}

// account returns org's account or fails the test.
func (f *fixture) account(o store.Org) store.CreditAccount {
	f.t.Helper()
	a, err := f.s.GetCreditAccount(f.ctx, o.ID)
	must(f.t, err)
	return a
}

// wantAccount fails the test unless org's balance and held amount are as
// given.
func (f *fixture) wantAccount(o store.Org, balance, held int64) {
	f.t.Helper()
	a := f.account(o)
	if a.BalanceMicros != balance || a.HeldMicros != held {
		f.t.Fatalf("account = balance %d held %d, want balance %d held %d", a.BalanceMicros, a.HeldMicros, balance, held)
	}
}

// wantCode fails the test unless err is of kind with the public code.
func wantCode(t *testing.T, err, kind error, code string) {
	t.Helper()
	wantKind(t, err, kind)
	if pe, ok := errdefs.Public(err); !ok || pe.Code != code {
		t.Fatalf("error %v: want code %q", err, code)
	}
}

// runningSandbox stores a running row of w's org settled up to at.
func (f *fixture) runningSandbox(w store.Workspace, at time.Time) store.Sandbox {
	f.t.Helper()
	r := f.runtime(w)
	return f.sandbox(store.Org{ID: w.OrgID}, func(sb *store.Sandbox) {
		sb.Kind, sb.State = store.KindRuntime, store.SandboxRunning
		sb.WorkspaceID, sb.ProjectID, sb.RuntimeID = w.ID, r.ProjectID, r.ID
		sb.CPUMillis, sb.MemoryMB = 1000, 1024
		sb.StartedAt, sb.LastSettledAt = at, at
	})
}

func testCreditAccounts(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx

	t.Run("a new org has a zero account", func(t *testing.T) {
		o := f.org()
		a := f.account(o)
		equal(t, "account", a, store.CreditAccount{OrgID: o.ID})
		equal(t, "available", a.AvailableMicros(), int64(0))
	})

	t.Run("unknown org", func(t *testing.T) {
		_, err := s.GetCreditAccount(ctx, uuid.NewString())
		wantKind(t, err, errdefs.ErrNotFound)
		_, err = s.PostCredit(ctx, store.CreditPosting{OrgID: uuid.NewString(), Kind: store.EntryGrant, AmountMicros: 1, IdempotencyKey: "k"})
		wantKind(t, err, errdefs.ErrNotFound)
	})

	t.Run("grant, hold, release, adjust", func(t *testing.T) { testCreditMovements(t, f) })

	t.Run("an idempotency key is used once per org", func(t *testing.T) {
		o, other := f.org(), f.org()
		p := store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 7, IdempotencyKey: "same"}
		_, err := s.PostCredit(ctx, p)
		must(t, err)
		for _, retry := range []store.CreditPosting{p, {OrgID: o.ID, Kind: store.EntryHold, AmountMicros: 1, IdempotencyKey: "same"}} {
			_, err = s.PostCredit(ctx, retry)
			wantCode(t, err, errdefs.ErrConflict, "idempotency_key_reused")
		}
		f.wantAccount(o, 7, 0)
		p.OrgID = other.ID
		_, err = s.PostCredit(ctx, p)
		must(t, err)
		f.wantAccount(other, 7, 0)
	})

	t.Run("a movement inside a rolled-back transaction leaves nothing", func(t *testing.T) { testCreditRolledBack(t, f) })

	o := f.org()
	bad := []struct {
		name string
		p    store.CreditPosting
	}{
		{"no org", store.CreditPosting{Kind: store.EntryGrant, AmountMicros: 1, IdempotencyKey: "k"}},
		{"no key", store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 1}},
		{"long key", store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 1, IdempotencyKey: strings.Repeat("k", 256)}},
		{"long note", store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 1, IdempotencyKey: "k", Note: strings.Repeat("n", 1025)}},
		{"zero grant", store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, IdempotencyKey: "k"}},
		{"negative grant", store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: -1, IdempotencyKey: "k"}},
		{"negative balance", store.CreditPosting{OrgID: o.ID, Kind: store.EntryAdjustment, AmountMicros: -1, IdempotencyKey: "k"}},
		{"zero hold", store.CreditPosting{OrgID: o.ID, Kind: store.EntryHold, IdempotencyKey: "k"}},
		{"deduction is a settlement", store.CreditPosting{OrgID: o.ID, Kind: store.EntryDeduction, AmountMicros: 1, IdempotencyKey: "k"}},
		{"unknown kind", store.CreditPosting{OrgID: o.ID, Kind: "gift", AmountMicros: 1, IdempotencyKey: "k"}},
	}
	for _, tc := range bad {
		t.Run("invalid: "+tc.name, func(t *testing.T) {
			_, err := s.PostCredit(ctx, tc.p)
			wantKind(t, err, errdefs.ErrInvalidArgument)
		})
	}
	t.Run("overflow", func(t *testing.T) {
		o := f.org()
		f.post(o, store.EntryGrant, 1<<62)
		_, err := s.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 1, IdempotencyKey: "one-more"})
		wantKind(t, err, errdefs.ErrInvalidArgument)
		f.wantAccount(o, 1<<62, 0)
	})
}

// testCreditMovements grants, holds, releases and adjusts credits and
// checks each entry and the account after it.
func testCreditMovements(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	o := f.org()
	at := f.next()
	e, err := s.PostCredit(ctx, store.CreditPosting{
		OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 5_000_000,
		IdempotencyKey: "grant-1", Note: "welcome", Actor: "key-1", At: at,
	})
	must(t, err)
	if e.ID == "" || e.Seq == 0 || e.AmountMicros != 5_000_000 || e.HeldMicros != 0 ||
		e.BalanceAfterMicros != 5_000_000 || e.HeldAfterMicros != 0 || e.Note != "welcome" ||
		e.Actor != "key-1" || !e.CreatedAt.Equal(ts(at)) {
		t.Fatalf("grant entry = %+v", e)
	}
	got, err := s.GetJournalEntryByKey(ctx, o.ID, "grant-1")
	must(t, err)
	equal(t, "entry by key", got, e)
	a := f.account(o)
	if !a.UpdatedAt.Equal(ts(at)) {
		t.Fatalf("account updated at %v, want %v", a.UpdatedAt, ts(at))
	}

	h := f.post(o, store.EntryHold, 2_000_000)
	equal(t, "hold change", [4]int64{h.AmountMicros, h.HeldMicros, h.BalanceAfterMicros, h.HeldAfterMicros}, [4]int64{0, 2_000_000, 5_000_000, 2_000_000})
	f.wantAccount(o, 5_000_000, 2_000_000)
	equal(t, "available", f.account(o).AvailableMicros(), int64(3_000_000))

	_, err = s.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryHold, AmountMicros: 3_000_001, IdempotencyKey: "too-much"})
	wantCode(t, err, errdefs.ErrPaymentRequired, "insufficient_credits")
	f.wantAccount(o, 5_000_000, 2_000_000)
	_, err = s.GetJournalEntryByKey(ctx, o.ID, "too-much")
	wantKind(t, err, errdefs.ErrNotFound)

	r := f.post(o, store.EntryRelease, 5_000_000) // more than held: frees what is held
	equal(t, "release change", r.HeldMicros, int64(-2_000_000))
	f.wantAccount(o, 5_000_000, 0)

	f.post(o, store.EntryHold, 4_000_000)
	adj := f.post(o, store.EntryAdjustment, 1_000_000)
	// Holds never exceed the balance.
	equal(t, "adjustment", [4]int64{adj.AmountMicros, adj.HeldMicros, adj.BalanceAfterMicros, adj.HeldAfterMicros}, [4]int64{-4_000_000, -3_000_000, 1_000_000, 1_000_000})
	f.wantAccount(o, 1_000_000, 1_000_000)
	f.post(o, store.EntryAdjustment, 0)
	f.wantAccount(o, 0, 0)
}

// testCreditRolledBack posts a grant inside a transaction that fails.
func testCreditRolledBack(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	o := f.org()
	errBoom := errors.New("boom")
	err := s.InTx(ctx, func(q store.Queries) error {
		if _, err := q.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 9, IdempotencyKey: "rolled"}); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("InTx = %v", err)
	}
	f.wantAccount(o, 0, 0)
	_, err = s.GetJournalEntryByKey(ctx, o.ID, "rolled")
	wantKind(t, err, errdefs.ErrNotFound)
}

func testSettlements(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx

	t.Run("a deduction moves balance, row and journal together", func(t *testing.T) { testSettleDeduction(t, f) })

	t.Run("a deduction never takes the balance below zero", func(t *testing.T) {
		o := f.org()
		w := f.workspace(o)
		t0 := f.next()
		sb := f.runningSandbox(w, t0)
		f.post(o, store.EntryGrant, 100)
		e, err := s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 250, IdempotencyKey: "short"})
		must(t, err)
		equal(t, "amount, shortfall, balance", [3]int64{e.AmountMicros, e.ShortfallMicros, e.BalanceAfterMicros}, [3]int64{-100, 150, 0})
		f.wantAccount(o, 0, 0)
		got, err := s.GetSandbox(ctx, sb.ID)
		must(t, err)
		equal(t, "billed what was taken", got.BilledMicros, int64(100))
		// With nothing left, a deduction records only the shortfall and
		// still moves the watermark.
		e, err = s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: got.LastSettledAt, UpTo: got.LastSettledAt.Add(time.Second), AmountMicros: 40, IdempotencyKey: "empty"})
		must(t, err)
		equal(t, "amount, shortfall, balance", [3]int64{e.AmountMicros, e.ShortfallMicros, e.BalanceAfterMicros}, [3]int64{0, 40, 0})
	})

	t.Run("credits held for other compute stay held", func(t *testing.T) {
		o := f.org()
		w := f.workspace(o)
		t0 := f.next()
		sb := f.runningSandbox(w, t0)
		f.post(o, store.EntryGrant, 1000)
		f.post(o, store.EntryHold, 800)
		e, err := s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 500, IdempotencyKey: "held"})
		must(t, err)
		equal(t, "amount, shortfall", [2]int64{e.AmountMicros, e.ShortfallMicros}, [2]int64{-200, 300})
		f.wantAccount(o, 800, 800)
	})

	t.Run("capturing a hold", func(t *testing.T) {
		o := f.org()
		w := f.workspace(o)
		sb := f.runningSandbox(w, time.Time{})
		f.post(o, store.EntryGrant, 1000)
		f.post(o, store.EntryHold, 600)
		t1 := f.next()
		e, err := s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: time.Time{}, UpTo: t1, AmountMicros: 600, ReleaseHeldMicros: 600, IdempotencyKey: "capture"})
		must(t, err)
		equal(t, "amount, held, balance, held after", [4]int64{e.AmountMicros, e.HeldMicros, e.BalanceAfterMicros, e.HeldAfterMicros}, [4]int64{-600, -600, 400, 0})
		if !e.PeriodStart.IsZero() || !e.PeriodEnd.Equal(ts(t1)) {
			t.Fatalf("period = %v..%v", e.PeriodStart, e.PeriodEnd)
		}
		f.wantAccount(o, 400, 0)
	})

	t.Run("a refund returns at most what was billed", func(t *testing.T) { testSettleRefund(t, f) })
	t.Run("a settlement inside a rolled-back transaction leaves nothing", func(t *testing.T) { testSettleRolledBack(t, f) })

	testSettleErrors(t, f)
}

// testSettleErrors checks the settlements Settle refuses.
func testSettleErrors(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	o, other := f.org(), f.org()
	w := f.workspace(o)
	t0 := f.next()
	sb := f.runningSandbox(w, t0)
	errs := []struct {
		name string
		s    store.Settlement
		kind error
	}{
		{"unknown sandbox", store.Settlement{OrgID: o.ID, SandboxID: uuid.NewString(), From: t0, UpTo: t0.Add(time.Second), AmountMicros: 1, IdempotencyKey: "x"}, errdefs.ErrNotFound},
		{"another org's sandbox", store.Settlement{OrgID: other.ID, SandboxID: sb.ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 1, IdempotencyKey: "x"}, errdefs.ErrNotFound},
		{"no key", store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 1}, errdefs.ErrInvalidArgument},
		{"no end", store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, AmountMicros: 1, IdempotencyKey: "x"}, errdefs.ErrInvalidArgument},
		{"nothing to do", store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t0.Add(time.Second), IdempotencyKey: "x"}, errdefs.ErrInvalidArgument},
		{"negative release", store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 1, ReleaseHeldMicros: -1, IdempotencyKey: "x"}, errdefs.ErrInvalidArgument},
		{"wrong watermark", store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0.Add(time.Second), UpTo: t0.Add(2 * time.Second), AmountMicros: 1, IdempotencyKey: "x"}, errdefs.ErrConflict},
	}
	for _, tc := range errs {
		t.Run("error: "+tc.name, func(t *testing.T) {
			_, err := s.Settle(ctx, tc.s)
			wantKind(t, err, tc.kind)
		})
	}
}

// testSettleDeduction settles a minute and checks the entry, the account
// and the row, then that the interval and the key cannot be used again.
func testSettleDeduction(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	o := f.org()
	w := f.workspace(o)
	t0 := f.next()
	sb := f.runningSandbox(w, t0)
	f.post(o, store.EntryGrant, 1_000_000)
	t1 := t0.Add(time.Minute)
	e, err := s.Settle(ctx, store.Settlement{
		OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t1, AmountMicros: 300_000,
		IdempotencyKey: "settle-1", Note: "a minute", At: t1,
	})
	must(t, err)
	want := store.JournalEntry{
		ID: e.ID, Seq: e.Seq, OrgID: o.ID, Kind: store.EntryDeduction, AmountMicros: -300_000,
		BalanceAfterMicros: 700_000, SandboxID: sb.ID, RuntimeID: sb.RuntimeID, ProjectID: sb.ProjectID,
		WorkspaceID: w.ID, PeriodStart: ts(t0), PeriodEnd: ts(t1), IdempotencyKey: "settle-1",
		Note: "a minute", CreatedAt: ts(t1),
	}
	equal(t, "deduction", e, want)
	stored, err := s.GetJournalEntryByKey(ctx, o.ID, "settle-1")
	must(t, err)
	equal(t, "stored deduction", stored, want)
	f.wantAccount(o, 700_000, 0)
	got, err := s.GetSandbox(ctx, sb.ID)
	must(t, err)
	if got.BilledMicros != 300_000 || !got.LastSettledAt.Equal(ts(t1)) || got.BillingVersion != sb.BillingVersion+1 || got.Version != sb.Version {
		t.Fatalf("row after settling = billed %d settled %v billing version %d version %d; want the billing version moved, not the row's",
			got.BilledMicros, got.LastSettledAt, got.BillingVersion, got.Version)
	}

	// The same interval again is stale: it can never be charged twice.
	_, err = s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t1, AmountMicros: 300_000, IdempotencyKey: "settle-1b"})
	wantCode(t, err, errdefs.ErrConflict, "settlement_stale")
	// And a used key is refused before anything moves.
	_, err = s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t1, UpTo: t1.Add(time.Minute), AmountMicros: 1, IdempotencyKey: "settle-1"})
	wantCode(t, err, errdefs.ErrConflict, "idempotency_key_reused")
	f.wantAccount(o, 700_000, 0)
	again, err := s.GetSandbox(ctx, sb.ID)
	must(t, err)
	equal(t, "row after refused settlements", again, got)
}

// testSettleRefund refunds prepaid time, then more than was billed.
func testSettleRefund(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	o := f.org()
	w := f.workspace(o)
	t0 := f.next()
	sb := f.runningSandbox(w, t0)
	f.post(o, store.EntryGrant, 1000)
	t1 := t0.Add(time.Minute)
	_, err := s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t1, AmountMicros: 600, IdempotencyKey: "prepay"})
	must(t, err)
	back := t0.Add(20 * time.Second)
	e, err := s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t1, UpTo: back, AmountMicros: -400, IdempotencyKey: "refund"})
	must(t, err)
	if e.Kind != store.EntryRefund || e.AmountMicros != 400 || e.BalanceAfterMicros != 800 ||
		!e.PeriodStart.Equal(ts(back)) || !e.PeriodEnd.Equal(ts(t1)) {
		t.Fatalf("refund = %+v", e)
	}
	got, err := s.GetSandbox(ctx, sb.ID)
	must(t, err)
	if got.BilledMicros != 200 || !got.LastSettledAt.Equal(ts(back)) {
		t.Fatalf("row after refund: billed %d settled %v", got.BilledMicros, got.LastSettledAt)
	}
	e, err = s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: back, UpTo: t0, AmountMicros: -1_000_000, IdempotencyKey: "refund-more"})
	must(t, err)
	equal(t, "capped refund", e.AmountMicros, int64(200))
	f.wantAccount(o, 1000, 0)
}

// testSettleRolledBack settles inside a transaction that fails.
func testSettleRolledBack(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	o := f.org()
	w := f.workspace(o)
	t0 := f.next()
	sb := f.runningSandbox(w, t0)
	f.post(o, store.EntryGrant, 1000)
	errBoom := errors.New("boom")
	err := s.InTx(ctx, func(q store.Queries) error {
		if _, err := q.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 10, IdempotencyKey: "rb"}); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("InTx = %v", err)
	}
	f.wantAccount(o, 1000, 0)
	got, err := s.GetSandbox(ctx, sb.ID)
	must(t, err)
	equal(t, "row after rollback", got, normSandbox(sb))
}

// journalKeys is the idempotency keys of es.
func journalKeys(es []store.JournalEntry) []string {
	return ids(es, func(e store.JournalEntry) string { return e.IdempotencyKey })
}

func testJournal(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o, other := f.org(), f.org()
	w := f.workspace(o)
	t0 := f.next()
	a, b := f.runningSandbox(w, t0), f.runningSandbox(w, t0)
	f.post(other, store.EntryGrant, 5)

	var all []store.JournalEntry // oldest first
	all = append(all, f.post(o, store.EntryGrant, 10_000))
	settle := func(sb store.Sandbox, from, to time.Time, amount int64) {
		e, err := s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: from, UpTo: to, AmountMicros: amount, IdempotencyKey: uuid.NewString(), At: to})
		must(t, err)
		all = append(all, e)
	}
	t1, t2, t3 := t0.Add(time.Minute), t0.Add(2*time.Minute), t0.Add(3*time.Minute)
	settle(a, t0, t1, 100)
	settle(b, t0, t1, 200)
	settle(a, t1, t2, 100)
	settle(a, t2, t1, -50) // a refund
	settle(b, t1, t3, 400)
	all = append(all, f.post(o, store.EntryGrant, 1))

	newest := func(pick func(store.JournalEntry) bool) []string {
		var out []store.JournalEntry
		for i := len(all) - 1; i >= 0; i-- {
			if pick(all[i]) {
				out = append(out, all[i])
			}
		}
		return journalKeys(out)
	}
	filters := []struct {
		name string
		f    store.JournalFilter
		pick func(store.JournalEntry) bool
	}{
		{"all", store.JournalFilter{}, func(store.JournalEntry) bool { return true }},
		{"sandbox", store.JournalFilter{SandboxID: a.ID}, func(e store.JournalEntry) bool { return e.SandboxID == a.ID }},
		{"runtime", store.JournalFilter{RuntimeID: b.RuntimeID}, func(e store.JournalEntry) bool { return e.RuntimeID == b.RuntimeID }},
		{"project", store.JournalFilter{ProjectID: a.ProjectID}, func(e store.JournalEntry) bool { return e.ProjectID == a.ProjectID }},
		{"workspace", store.JournalFilter{WorkspaceID: w.ID}, func(e store.JournalEntry) bool { return e.WorkspaceID == w.ID }},
		{"kind", store.JournalFilter{Kind: store.EntryRefund}, func(e store.JournalEntry) bool { return e.Kind == store.EntryRefund }},
		{"time range", store.JournalFilter{From: t1, To: t3}, func(e store.JournalEntry) bool {
			return !e.CreatedAt.Before(ts(t1)) && e.CreatedAt.Before(ts(t3))
		}},
	}
	for _, tc := range filters {
		t.Run("filter "+tc.name, func(t *testing.T) {
			tc.f.OrgID = o.ID
			got, next, err := s.ListJournal(ctx, tc.f, store.Page{})
			must(t, err)
			equal(t, "entries", journalKeys(got), newest(tc.pick))
			equal(t, "next cursor", next, "")
		})
	}

	t.Run("pages, newest first", func(t *testing.T) { testJournalPages(t, f, o, newest(func(store.JournalEntry) bool { return true })) })

	t.Run("errors", func(t *testing.T) {
		_, _, err := s.ListJournal(ctx, store.JournalFilter{}, store.Page{})
		wantKind(t, err, errdefs.ErrInvalidArgument)
		_, _, err = s.ListJournal(ctx, store.JournalFilter{OrgID: o.ID}, store.Page{Cursor: "%%%"})
		wantKind(t, err, errdefs.ErrInvalidArgument)
	})

	t.Run("usage", func(t *testing.T) { testSumUsage(t, f, o, w, a, b, t2, t3) })
	t.Run("usage by day", func(t *testing.T) { testSumUsageDaily(t, s) })
	t.Run("open holds", func(t *testing.T) { testOpenHolds(t, s) })
}

// testOpenHolds holds credits for three sandboxes, closes one hold with a
// release and one with a charge, and lists the one left open.
func testOpenHolds(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o, other := f.org(), f.org()
	w := f.workspace(o)
	f.post(o, store.EntryGrant, 10_000)
	f.post(other, store.EntryGrant, 10_000)
	hold := func(o store.Org, sb store.Sandbox, suffix string) store.JournalEntry {
		t.Helper()
		e, err := s.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryHold, AmountMicros: 100,
			SandboxID: sb.ID, RuntimeID: sb.RuntimeID, ProjectID: sb.ProjectID, WorkspaceID: sb.WorkspaceID,
			IdempotencyKey: "hold:" + suffix, At: f.next()})
		must(t, err)
		return e
	}
	t0 := f.next()
	released, charged, open, newer := f.runningSandbox(w, t0), f.runningSandbox(w, t0), f.runningSandbox(w, t0), f.runningSandbox(w, t0)
	hold(o, released, released.ID+":1")
	hold(o, charged, charged.ID+":1")
	openHold := hold(o, open, open.ID+":1")
	newerHold := hold(o, newer, newer.ID+":1")
	hold(other, f.sandbox(other, func(*store.Sandbox) {}), "x:1")
	_, err := s.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryRelease, AmountMicros: 100,
		SandboxID: released.ID, IdempotencyKey: "release:" + released.ID + ":1", At: f.next()})
	must(t, err)
	_, err = s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: charged.ID, From: t0, UpTo: t0.Add(time.Minute),
		AmountMicros: 100, ReleaseHeldMicros: 100, IdempotencyKey: "charge:" + charged.ID + ":1", At: f.next()})
	must(t, err)

	got, next, err := s.ListOpenHolds(ctx, o.ID, store.Page{})
	must(t, err)
	equal(t, "open holds", journalKeys(got), []string{newerHold.IdempotencyKey, openHold.IdempotencyKey})
	equal(t, "next", next, "")
	equal(t, "held", f.account(o).HeldMicros, int64(200))

	first, next, err := s.ListOpenHolds(ctx, o.ID, store.Page{Limit: 1})
	must(t, err)
	equal(t, "first page", journalKeys(first), []string{newerHold.IdempotencyKey})
	second, next, err := s.ListOpenHolds(ctx, o.ID, store.Page{Limit: 1, Cursor: next})
	must(t, err)
	equal(t, "second page", journalKeys(second), []string{openHold.IdempotencyKey})
	equal(t, "last cursor", next, "")

	_, _, err = s.ListOpenHolds(ctx, "", store.Page{})
	wantKind(t, err, errdefs.ErrInvalidArgument)
}

// testSumUsageDaily charges two projects' sandboxes on either side of a
// UTC midnight (the fixture's clock is in another zone) and sums their
// usage per day.
func testSumUsageDaily(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)
	day1 := base.UTC().Truncate(24 * time.Hour).Add(48 * time.Hour)
	day2 := day1.Add(24 * time.Hour)
	t0 := day1.Add(time.Hour)
	a, b := f.runningSandbox(w, t0), f.runningSandbox(w, t0)
	f.post(o, store.EntryGrant, 10_000)
	settle := func(sb store.Sandbox, from, to time.Time, amount int64) {
		t.Helper()
		_, err := s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: from, UpTo: to, AmountMicros: amount, IdempotencyKey: uuid.NewString(), At: to})
		must(t, err)
	}
	lastOf1 := day2.Add(-time.Microsecond)
	settle(a, t0, day1.Add(2*time.Hour), 100)
	settle(a, day1.Add(2*time.Hour), lastOf1, 300)
	settle(b, t0, day1.Add(3*time.Hour), 50)
	settle(a, lastOf1, day2, 7)
	settle(a, day2, day2.Add(time.Hour), -20) // a refund
	rows := func(q store.UsageQuery) []store.UsageRow {
		t.Helper()
		q.OrgID, q.Daily = o.ID, true
		got, err := s.SumUsage(ctx, q)
		must(t, err)
		return got
	}
	equal(t, "by project and day", rows(store.UsageQuery{GroupBy: store.UsageByProject}), []store.UsageRow{
		{Key: a.ProjectID, Day: day1, ChargedMicros: 400, Entries: 2},
		{Key: b.ProjectID, Day: day1, ChargedMicros: 50, Entries: 1},
		{Key: a.ProjectID, Day: day2, ChargedMicros: 7, RefundedMicros: 20, Entries: 2},
	})
	equal(t, "by org and day", rows(store.UsageQuery{}), []store.UsageRow{
		{Key: o.ID, Day: day1, ChargedMicros: 450, Entries: 3},
		{Key: o.ID, Day: day2, ChargedMicros: 7, RefundedMicros: 20, Entries: 2},
	})
	equal(t, "second day only", rows(store.UsageQuery{From: day2}), []store.UsageRow{
		{Key: o.ID, Day: day2, ChargedMicros: 7, RefundedMicros: 20, Entries: 2},
	})
	_, err := s.SumUsage(ctx, store.UsageQuery{OrgID: o.ID, GroupBy: "user", Daily: true})
	wantKind(t, err, errdefs.ErrInvalidArgument)
}

// testSumUsage sums the usage of the entries testJournal made in o (whose
// workspace w ran a and b), grouped each way and over [t2, t3).
func testSumUsage(t *testing.T, f *fixture, o store.Org, w store.Workspace, a, b store.Sandbox, t2, t3 time.Time) {
	s, ctx := f.s, f.ctx
	rows := func(q store.UsageQuery) []store.UsageRow {
		t.Helper()
		q.OrgID = o.ID
		got, err := s.SumUsage(ctx, q)
		must(t, err)
		return got
	}
	equal(t, "by sandbox", rows(store.UsageQuery{GroupBy: store.UsageBySandbox}), []store.UsageRow{
		{Key: b.ID, ChargedMicros: 600, Entries: 2},
		{Key: a.ID, ChargedMicros: 200, RefundedMicros: 50, Entries: 3},
	})
	equal(t, "by runtime", rows(store.UsageQuery{GroupBy: store.UsageByRuntime})[1], store.UsageRow{Key: a.RuntimeID, ChargedMicros: 200, RefundedMicros: 50, Entries: 3})
	equal(t, "by project", rows(store.UsageQuery{GroupBy: store.UsageByProject})[0], store.UsageRow{Key: b.ProjectID, ChargedMicros: 600, Entries: 2})
	equal(t, "by workspace", rows(store.UsageQuery{GroupBy: store.UsageByWorkspace}), []store.UsageRow{{Key: w.ID, ChargedMicros: 800, RefundedMicros: 50, Entries: 5}})
	org := []store.UsageRow{{Key: o.ID, ChargedMicros: 800, RefundedMicros: 50, Entries: 5}}
	equal(t, "by org", rows(store.UsageQuery{GroupBy: store.UsageByOrg}), org)
	equal(t, "default group", rows(store.UsageQuery{}), org)
	equal(t, "net", org[0].NetMicros(), int64(750))
	// Entries count when they were made: the refund was made at t1 and
	// b's last charge at t3, outside [t2, t3).
	equal(t, "time range", rows(store.UsageQuery{From: t2, To: t3}), []store.UsageRow{{Key: o.ID, ChargedMicros: 100, Entries: 1}})
	equal(t, "empty range", len(rows(store.UsageQuery{From: t3.Add(time.Hour)})), 0)
	_, err := s.SumUsage(ctx, store.UsageQuery{OrgID: o.ID, GroupBy: "user"})
	wantKind(t, err, errdefs.ErrInvalidArgument)
	_, err = s.SumUsage(ctx, store.UsageQuery{})
	wantKind(t, err, errdefs.ErrInvalidArgument)
}

// testJournalPages pages through o's journal two entries at a time and
// checks it lists want, the keys of all entries newest first.
func testJournalPages(t *testing.T, f *fixture, o store.Org, want []string) {
	s, ctx := f.s, f.ctx
	var got []store.JournalEntry
	page := store.Page{Limit: 2}
	for range len(want) {
		es, next, err := s.ListJournal(ctx, store.JournalFilter{OrgID: o.ID}, page)
		must(t, err)
		got = append(got, es...)
		if next == "" {
			break
		}
		page.Cursor = next
	}
	equal(t, "paged entries", journalKeys(got), want)
	for i := 1; i < len(got); i++ {
		if got[i].Seq >= got[i-1].Seq {
			t.Fatalf("seq not descending: %d then %d", got[i-1].Seq, got[i].Seq)
		}
	}
}

func testRunningSandboxes(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)
	want := map[string]bool{}
	for range 5 {
		at := f.next()
		r := f.runtime(w)
		sb := f.sandbox(o, func(sb *store.Sandbox) {
			sb.Kind, sb.State, sb.Provider = store.KindRuntime, store.SandboxRunning, "docker"
			sb.WorkspaceID, sb.ProjectID, sb.RuntimeID = w.ID, r.ProjectID, r.ID
			sb.CPUMillis, sb.MemoryMB, sb.Image = 2000, 512, "busybox"
			sb.StartedAt, sb.LastSettledAt, sb.RunningSince = at, at.Add(time.Second), at.Add(2*time.Second)
		})
		want[sb.ID] = true
	}
	for _, st := range []store.SandboxState{store.SandboxStarting, store.SandboxPaused, store.SandboxKilled} {
		f.sandbox(o, func(sb *store.Sandbox) { sb.State = st })
	}
	var got []string
	after := ""
	for range 10 {
		rows, err := s.ListRunningSandboxes(ctx, after, 2)
		must(t, err)
		if len(rows) == 0 {
			break
		}
		for _, r := range rows {
			if r.State != store.SandboxRunning {
				t.Fatalf("listed a %s row", r.State)
			}
			if r.ID <= after {
				t.Fatalf("ids not ascending: %s after %s", r.ID, after)
			}
			after = r.ID
			got = append(got, r.ID)
			if want[r.ID] {
				// The scan carries every field billing reads, as stored.
				full, err := s.GetSandbox(ctx, r.ID)
				must(t, err)
				equal(t, "listed billing fields", r, billingFields(full))
			}
		}
	}
	// Other tests' running rows may share the store; ours are all there.
	seen := map[string]bool{}
	for _, id := range got {
		seen[id] = true
	}
	for id := range want {
		if !seen[id] {
			t.Fatalf("running row %s not listed", id)
		}
	}
}

// billingFields is sb as ListRunningSandboxes lists it: the fields billing
// reads, the others zero.
func billingFields(sb store.Sandbox) store.Sandbox {
	return store.Sandbox{ID: sb.ID, OrgID: sb.OrgID, WorkspaceID: sb.WorkspaceID, ProjectID: sb.ProjectID, RuntimeID: sb.RuntimeID,
		Kind: sb.Kind, State: sb.State, Provider: sb.Provider, CPUMillis: sb.CPUMillis, MemoryMB: sb.MemoryMB,
		BilledMicros: sb.BilledMicros, StartedAt: sb.StartedAt, RunningSince: sb.RunningSince,
		LastSettledAt: sb.LastSettledAt, BillingVersion: sb.BillingVersion}
}
