package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// settleWorld is an org set up for the SettleMany tests: a workspace,
// running rows, and an account with a grant, a hold and a used key.
type settleWorld struct {
	o   store.Org
	w   store.Workspace
	sbs []store.Sandbox
}

// settleWorld builds a world whose rows were settled up to t0, but for the
// last, which has never been settled (its first charge captures the
// hold).
func (f *fixture) settleWorld(t0 time.Time) settleWorld {
	f.t.Helper()
	o := f.org()
	wd := settleWorld{o: o, w: f.workspace(o)}
	for range 3 {
		wd.sbs = append(wd.sbs, f.runningSandbox(wd.w, t0))
	}
	wd.sbs = append(wd.sbs, f.runningSandbox(wd.w, time.Time{}))
	for _, p := range []store.CreditPosting{
		{Kind: store.EntryGrant, AmountMicros: 1000, IdempotencyKey: "grant"},
		{Kind: store.EntryHold, AmountMicros: 300, IdempotencyKey: "hold"},
	} {
		p.OrgID, p.At = o.ID, t0
		_, err := f.s.PostCredit(f.ctx, p)
		must(f.t, err)
	}
	return wd
}

// sameOutcome fails the test unless a settlement made with SettleMany
// (entry got, error gotErr) ended as Settle ended it (want, wantErr),
// apart from the names of the org's records.
func sameOutcome(t *testing.T, i int, got store.JournalEntry, gotErr error, want store.JournalEntry, wantErr error) {
	t.Helper()
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("settlement %d: SettleMany error %v, Settle error %v", i, gotErr, wantErr)
	}
	if wantErr != nil {
		wp, _ := errdefs.Public(wantErr)
		gp, _ := errdefs.Public(gotErr)
		if wp.Code != gp.Code || !sameKind(gotErr, wantErr) {
			t.Fatalf("settlement %d: SettleMany error %v, Settle error %v", i, gotErr, wantErr)
		}
		return
	}
	type outcome struct {
		Kind                                    store.EntryKind
		Amount, Held, Balance, HeldAfter, Short int64
		Start, End, Created                     time.Time
		Key, Note, Actor                        string
	}
	of := func(e store.JournalEntry) outcome {
		return outcome{e.Kind, e.AmountMicros, e.HeldMicros, e.BalanceAfterMicros, e.HeldAfterMicros, e.ShortfallMicros,
			e.PeriodStart, e.PeriodEnd, e.CreatedAt, e.IdempotencyKey, e.Note, e.Actor}
	}
	equal(t, fmt.Sprintf("settlement %d", i), of(got), of(want))
}

// sameKind reports whether two errors are of the same errdefs kind.
func sameKind(a, b error) bool {
	for _, kind := range []error{errdefs.ErrNotFound, errdefs.ErrConflict, errdefs.ErrInvalidArgument} {
		if errors.Is(a, kind) != errors.Is(b, kind) {
			return false
		}
	}
	return true
}

func testSettleMany(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx

	t.Run("ends as Settle one by one would", func(t *testing.T) { testSettleManyAsSettle(t, f) })
	t.Run("more rows than a statement carries", func(t *testing.T) { testSettleManyLarge(t, f) })

	t.Run("a settlement of another org is refused in its slot", func(t *testing.T) {
		t0 := f.next()
		wd, other := f.settleWorld(t0), f.settleWorld(t0)
		got, errs, err := s.SettleMany(ctx, wd.o.ID, []store.Settlement{
			{OrgID: other.o.ID, SandboxID: other.sbs[0].ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 10, IdempotencyKey: "theirs"},
			{OrgID: wd.o.ID, SandboxID: wd.sbs[0].ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 10, IdempotencyKey: "ours"},
		})
		must(t, err)
		wantKind(t, errs[0], errdefs.ErrInvalidArgument)
		must(t, errs[1])
		equal(t, "charged", got[1].AmountMicros, int64(-10))
		f.wantAccount(other.o, 1000, 300)
		f.wantAccount(wd.o, 990, 300)
	})

	t.Run("refusing everything writes nothing", func(t *testing.T) {
		t0 := f.next()
		wd := f.settleWorld(t0)
		before := f.account(wd.o)
		_, errs, err := s.SettleMany(ctx, wd.o.ID, []store.Settlement{
			{OrgID: wd.o.ID, SandboxID: wd.sbs[0].ID, From: t0.Add(time.Second), UpTo: t0.Add(time.Minute), AmountMicros: 10, IdempotencyKey: "stale", At: t0.Add(time.Hour)},
		})
		must(t, err)
		wantCode(t, errs[0], errdefs.ErrConflict, "settlement_stale")
		equal(t, "account", f.account(wd.o), before)
		got, err := s.GetSandbox(ctx, wd.sbs[0].ID)
		must(t, err)
		equal(t, "row", got, normSandbox(wd.sbs[0]))
	})

	t.Run("inside a rolled-back transaction it leaves nothing", func(t *testing.T) { testSettleManyRolledBack(t, f) })

	t.Run("an entry id the journal holds is refused in its slot", func(t *testing.T) {
		t0 := f.next()
		wd := f.settleWorld(t0)
		used, err := s.GetJournalEntryByKey(ctx, wd.o.ID, "grant")
		must(t, err)
		st := store.Settlement{ID: used.ID, OrgID: wd.o.ID, SandboxID: wd.sbs[0].ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 10, IdempotencyKey: "fresh"}
		_, errs, err := s.SettleMany(ctx, wd.o.ID, []store.Settlement{st})
		must(t, err)
		wantCode(t, errs[0], errdefs.ErrConflict, "idempotency_key_reused")
		_, err = s.Settle(ctx, st)
		wantCode(t, err, errdefs.ErrConflict, "idempotency_key_reused")
		f.wantAccount(wd.o, 1000, 300)
	})

	t.Run("no org", func(t *testing.T) {
		_, _, err := s.SettleMany(ctx, "", nil)
		wantKind(t, err, errdefs.ErrInvalidArgument)
	})
}

// settleScript is the settlements testSettleManyAsSettle runs in wd, a
// settleWorld begun at t0; the comments say what Settle answers.
func settleScript(wd settleWorld, t0 time.Time, strangerID string) []store.Settlement {
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	a, b, c, fresh := wd.sbs[0].ID, wd.sbs[1].ID, wd.sbs[2].ID, wd.sbs[3].ID
	return []store.Settlement{
		{SandboxID: a, From: t0, UpTo: t1, AmountMicros: 400, IdempotencyKey: "a1", Note: "a minute"},
		// 300 of the 1000 are held: only 300 are left to take.
		{SandboxID: b, From: t0, UpTo: t1, AmountMicros: 500, IdempotencyKey: "b1"},
		// Capturing the hold takes it, though nothing else is left.
		{SandboxID: fresh, UpTo: t1, AmountMicros: 300, ReleaseHeldMicros: 300, IdempotencyKey: "capture"},
		// a moved to t1 above: from t0 is stale now.
		{SandboxID: a, From: t0, UpTo: t2, AmountMicros: 1, IdempotencyKey: "a-stale"},
		// A refund of prepaid time, capped at what a was billed.
		{SandboxID: a, From: t1, UpTo: t0.Add(30 * time.Second), AmountMicros: -1000, IdempotencyKey: "a-refund"},
		// A key the batch already used, and one the journal held.
		{SandboxID: a, From: t0.Add(30 * time.Second), UpTo: t2, AmountMicros: 50, IdempotencyKey: "a1"},
		{SandboxID: c, From: t0, UpTo: t1, AmountMicros: 50, IdempotencyKey: "grant"},
		{SandboxID: uuid.NewString(), From: t0, UpTo: t1, AmountMicros: 1, IdempotencyKey: "unknown"},
		{SandboxID: strangerID, From: t0, UpTo: t1, AmountMicros: 1, IdempotencyKey: "stranger"},
		{SandboxID: c, From: t0, UpTo: t1, IdempotencyKey: "nothing"},
		// Running began after the watermark: the period starts there.
		{SandboxID: c, From: t0, Since: t0.Add(10 * time.Second), UpTo: t1, AmountMicros: 100, IdempotencyKey: "c1"},
		{SandboxID: a, From: t0.Add(30 * time.Second), UpTo: t2, AmountMicros: 30, IdempotencyKey: "a2"},
	}
}

// testSettleManyAsSettle runs one script of settlements through Settle
// one by one and through SettleMany, and checks that both end the same.
func testSettleManyAsSettle(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	// Two orgs in the same state settle the same script, one with a
	// Settle call per settlement, the other with one SettleMany:
	// every entry, refusal, row and account must agree.
	t0 := f.next()
	one, many := f.settleWorld(t0), f.settleWorld(t0)
	stranger := f.runningSandbox(f.workspace(f.org()), t0)
	t1 := t0.Add(time.Minute)
	stamp := func(wd settleWorld) []store.Settlement {
		ss := settleScript(wd, t0, stranger.ID)
		for i := range ss {
			ss[i].OrgID, ss[i].At = wd.o.ID, t1.Add(time.Duration(i)*time.Second)
		}
		return ss
	}
	ones := stamp(one)
	wantEntries, wantErrs := make([]store.JournalEntry, len(ones)), make([]error, len(ones))
	for i, st := range ones {
		wantEntries[i], wantErrs[i] = s.Settle(ctx, st)
	}
	got, errs, err := s.SettleMany(ctx, many.o.ID, stamp(many))
	must(t, err)
	equal(t, "results", [2]int{len(got), len(errs)}, [2]int{len(ones), len(ones)})
	var seqs []int64
	for i := range ones {
		sameOutcome(t, i, got[i], errs[i], wantEntries[i], wantErrs[i])
		if errs[i] != nil {
			continue
		}
		seqs = append(seqs, got[i].Seq)
		stored, err := s.GetJournalEntryByKey(ctx, many.o.ID, got[i].IdempotencyKey)
		must(t, err)
		equal(t, fmt.Sprintf("stored entry %d", i), stored, got[i])
	}
	if !slices.IsSorted(seqs) {
		t.Fatalf("seqs %v do not follow the batch", seqs)
	}
	for _, code := range []string{"settlement_stale", "idempotency_key_reused"} {
		if !slices.ContainsFunc(errs, func(err error) bool { pe, ok := errdefs.Public(err); return ok && pe.Code == code }) {
			t.Fatalf("the script refused nothing with %s: %v", code, errs)
		}
	}

	wantAcct, gotAcct := f.account(one.o), f.account(many.o)
	wantAcct.OrgID = many.o.ID
	equal(t, "account", gotAcct, wantAcct)
	for i := range one.sbs {
		want, err := s.GetSandbox(ctx, one.sbs[i].ID)
		must(t, err)
		got, err := s.GetSandbox(ctx, many.sbs[i].ID)
		must(t, err)
		equal(t, fmt.Sprintf("row %d billed, watermark, billing version, version", i),
			[]any{got.BilledMicros, got.LastSettledAt, got.BillingVersion, got.Version},
			[]any{want.BilledMicros, want.LastSettledAt, want.BillingVersion, want.Version})
	}
	equal(t, "billing version of a row settled three times", f.billingVersion(many.sbs[0]), many.sbs[0].BillingVersion+3)
}

// testSettleManyLarge settles more rows than one statement carries.
func testSettleManyLarge(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	const n = 150
	o := f.org()
	t0 := f.next()
	f.post(o, store.EntryGrant, 1_000_000)
	ss := make([]store.Settlement, n)
	for i := range ss {
		sb := f.sandbox(o, func(sb *store.Sandbox) {
			sb.State, sb.StartedAt, sb.LastSettledAt = store.SandboxRunning, t0, t0
		})
		ss[i] = store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t0.Add(time.Minute),
			AmountMicros: int64(i + 1), IdempotencyKey: fmt.Sprintf("k%d", i), At: t0.Add(time.Minute)}
	}
	got, errs, err := s.SettleMany(ctx, o.ID, ss)
	must(t, err)
	balance := int64(1_000_000)
	for i, e := range got {
		must(t, errs[i])
		balance -= int64(i + 1)
		equal(t, fmt.Sprintf("entry %d amount, balance after", i), [2]int64{e.AmountMicros, e.BalanceAfterMicros}, [2]int64{-int64(i + 1), balance})
		if i > 0 && e.Seq <= got[i-1].Seq {
			t.Fatalf("entry %d has seq %d after %d", i, e.Seq, got[i-1].Seq)
		}
		sb, err := s.GetSandbox(ctx, ss[i].SandboxID)
		must(t, err)
		equal(t, fmt.Sprintf("row %d billed", i), sb.BilledMicros, int64(i+1))
	}
	f.wantAccount(o, balance, 0)
	// The journal lists them newest first, each balance following from
	// the one before.
	es, _, err := s.ListJournal(ctx, store.JournalFilter{OrgID: o.ID, Kind: store.EntryDeduction}, store.Page{Limit: store.MaxLimit})
	must(t, err)
	equal(t, "listed", len(es), n)
	for i := 0; i+1 < len(es); i++ {
		if es[i].BalanceAfterMicros != es[i+1].BalanceAfterMicros+es[i].AmountMicros {
			t.Fatalf("entry %s: balance %d after %d and amount %d", es[i].IdempotencyKey, es[i].BalanceAfterMicros, es[i+1].BalanceAfterMicros, es[i].AmountMicros)
		}
	}
}

// testSettleManyRolledBack settles inside a transaction that fails.
func testSettleManyRolledBack(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	t0 := f.next()
	wd := f.settleWorld(t0)
	errBoom := errors.New("boom")
	err := s.InTx(ctx, func(q store.Queries) error {
		_, errs, err := q.SettleMany(ctx, wd.o.ID, []store.Settlement{
			{OrgID: wd.o.ID, SandboxID: wd.sbs[0].ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 10, IdempotencyKey: "rb"},
		})
		if err == nil {
			err = errors.Join(errs...)
		}
		if err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("InTx = %v", err)
	}
	f.wantAccount(wd.o, 1000, 300)
	got, err := s.GetSandbox(ctx, wd.sbs[0].ID)
	must(t, err)
	equal(t, "row after rollback", got, normSandbox(wd.sbs[0]))
	_, err = s.GetJournalEntryByKey(ctx, wd.o.ID, "rb")
	wantKind(t, err, errdefs.ErrNotFound)
}

// billingVersion returns sb's stored billing version.
func (f *fixture) billingVersion(sb store.Sandbox) int64 {
	f.t.Helper()
	got, err := f.s.GetSandbox(f.ctx, sb.ID)
	must(f.t, err)
	return got.BillingVersion
}
