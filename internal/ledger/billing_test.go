package ledger_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

func TestStartNeedsCreditsForTheFirstSlice(t *testing.T) {
	h := newHarness(t, testPricing)
	rt := h.runtime("p1")

	_, err := h.rts.Start(h.ctx, rt.ID, nil)
	wantCode(t, err, errdefs.ErrPaymentRequired, ledger.CodeInsufficientCredits)
	// Nothing was created: no row, no compute, no journal, runtime idle.
	sbs, _, err := h.st.ListSandboxes(h.ctx, store.SandboxFilter{OrgID: h.org.ID}, store.Page{})
	h.must(err)
	if len(sbs) != 0 || h.fake.Count() != 0 || h.fake.Calls(fake.OpCreate) != 0 || len(h.kinds()) != 0 {
		t.Fatalf("a refused start left rows %d, compute %d, journal %v", len(sbs), h.fake.Count(), h.kinds())
	}
	equal(t, "status", h.get(rt.ID).Status, store.RuntimeIdle)

	h.grant(slice - 1) // one micro-credit short
	_, err = h.rts.Start(h.ctx, rt.ID, nil)
	wantCode(t, err, errdefs.ErrPaymentRequired, ledger.CodeInsufficientCredits)

	h.grant(1)
	started := h.clock.Now()
	rt, err = h.rts.Start(h.ctx, rt.ID, nil)
	h.must(err)
	equal(t, "status", rt.Status, store.RuntimeRunning)
	sb := h.sandbox(rt.CurrentSandboxID)
	// The first minute is prepaid: billed, and the watermark at its end.
	equal(t, "billed", sb.BilledMicros, int64(slice))
	equal(t, "watermark", sb.LastSettledAt, started.Add(time.Minute))
	h.account(0, 0)
	if got := h.kinds(); !slices.Equal(got, []store.EntryKind{store.EntryGrant, store.EntryGrant, store.EntryHold, store.EntryDeduction}) {
		t.Fatalf("journal = %v", got)
	}
	// On prepaid time nothing is running up.
	h.clock.Advance(30 * time.Second)
	equal(t, "running credits", h.l.Meter().RunningMicros(h.sandbox(sb.ID), h.clock.Now()), int64(0))
}

func TestFailedStartCostsNothing(t *testing.T) {
	h := newHarness(t, testPricing)
	h.grant(100_000)
	rt := h.runtime("p1")
	h.fake.FailNext(fake.OpStart, errdefs.Unavailable("engine_down", "the engine is down"))
	rt, err := h.rts.Start(h.ctx, rt.ID, nil)
	if err == nil {
		t.Fatal("start succeeded")
	}
	equal(t, "status", rt.Status, store.RuntimeError)
	h.account(100_000, 0)
	if got := h.kinds(); !slices.Equal(got, []store.EntryKind{store.EntryGrant, store.EntryHold, store.EntryRelease}) {
		t.Fatalf("journal = %v", got)
	}
	sbs, _, err := h.st.ListSandboxes(h.ctx, store.SandboxFilter{OrgID: h.org.ID}, store.Page{})
	h.must(err)
	if len(sbs) != 1 || sbs[0].State != store.SandboxKilled || sbs[0].BilledMicros != 0 {
		t.Fatalf("rows = %+v", sbs)
	}
}

func TestPauseRefundsResumePrepaysKillSettles(t *testing.T) {
	h := newHarness(t, testPricing)
	h.grant(1_000_000)
	rt := h.runtime("p1")
	rt, err := h.rts.Start(h.ctx, rt.ID, nil)
	h.must(err)
	id := rt.CurrentSandboxID

	// Paused 20s into the prepaid minute: 40s come back.
	h.clock.Advance(20 * time.Second)
	pausedAt := h.clock.Now()
	rt, err = h.rts.Pause(h.ctx, rt.ID, store.PauseUser)
	h.must(err)
	sb := h.sandbox(id)
	equal(t, "billed after pause", sb.BilledMicros, int64(20_000))
	equal(t, "watermark after pause", sb.LastSettledAt, pausedAt)
	h.account(1_000_000-20_000, 0)

	// Paused compute accrues nothing, and the settler charges nothing.
	h.clock.Advance(time.Hour)
	equal(t, "running while paused", h.l.Meter().RunningMicros(h.sandbox(id), h.clock.Now()), int64(0))
	equal(t, "settled while paused", h.tick().Settled, 0)

	rt, err = h.rts.Resume(h.ctx, rt.ID)
	h.must(err)
	equal(t, "billed after resume", h.sandbox(id).BilledMicros, int64(20_000+slice))

	// Killed 90s after resuming: 30s past the prepaid minute are charged.
	h.clock.Advance(90 * time.Second)
	sb, err = h.rts.KillSandbox(h.ctx, id)
	h.must(err)
	equal(t, "state", sb.State, store.SandboxKilled)
	equal(t, "billed at kill", sb.BilledMicros, int64(20_000+90_000))
	h.account(1_000_000-110_000, 0)
	if got := h.kinds(); !slices.Equal(got, []store.EntryKind{
		store.EntryGrant,
		store.EntryHold, store.EntryDeduction, // start
		store.EntryRefund,                     // pause
		store.EntryHold, store.EntryDeduction, // resume
		store.EntryDeduction, // kill
	}) {
		t.Fatalf("journal = %v", got)
	}
	// A killed row accrues nothing more.
	h.clock.Advance(time.Hour)
	equal(t, "settled after kill", h.tick().Settled, 0)
	usage, err := h.l.Usage(h.ctx, store.UsageQuery{OrgID: h.org.ID, GroupBy: store.UsageBySandbox})
	h.must(err)
	if len(usage) != 1 || usage[0].Key != id || usage[0].NetMicros() != 110_000 {
		t.Fatalf("usage = %+v", usage)
	}
}

func TestResetAndProjectDeleteSettle(t *testing.T) {
	h := newHarness(t, testPricing)
	h.grant(1_000_000)
	for _, end := range []string{"reset", "delete"} {
		t.Run(end, func(t *testing.T) {
			rt := h.runtime("p-" + end)
			rt, err := h.rts.Start(h.ctx, rt.ID, nil)
			h.must(err)
			id := rt.CurrentSandboxID
			h.clock.Advance(3 * time.Minute)
			switch end {
			case "reset":
				_, err = h.rts.Reset(h.ctx, rt.ID, false)
			case "delete":
				p, perr := h.st.GetProject(h.ctx, rt.ProjectID)
				h.must(perr)
				err = h.rts.DeleteProject(h.ctx, p)
			}
			h.must(err)
			sb := h.sandbox(id)
			equal(t, "state", sb.State, store.SandboxKilled)
			equal(t, "billed", sb.BilledMicros, int64(180_000))
		})
	}
}

func TestSettlerChargesRunningTime(t *testing.T) {
	h := newHarness(t, testPricing)
	h.grant(1_000_000)
	rt := h.runtime("p1")
	rt, err := h.rts.Start(h.ctx, rt.ID, nil)
	h.must(err)
	id := rt.CurrentSandboxID

	// Within the prepaid minute the settler has nothing to do.
	h.clock.Advance(45 * time.Second)
	res := h.tick()
	equal(t, "scanned", res.Scanned, 1)
	equal(t, "settled in the prepaid minute", res.Settled, 0)

	h.clock.Advance(4*time.Minute + 15*time.Second) // five minutes in all
	equal(t, "running credits", h.l.Meter().RunningMicros(h.sandbox(id), h.clock.Now()), int64(240_000))
	res = h.tick()
	equal(t, "settled", res.Settled, 1)
	equal(t, "charged", res.ChargedMicros, int64(240_000))
	sb := h.sandbox(id)
	equal(t, "billed", sb.BilledMicros, int64(300_000))
	equal(t, "running credits after the tick", h.l.Meter().RunningMicros(sb, h.clock.Now()), int64(0))
	h.account(700_000, 0)
	// A second tick at the same time charges nothing more.
	equal(t, "settled again", h.tick().Settled, 0)

	// An action in between never double-charges: pause settles from the
	// tick's watermark.
	h.clock.Advance(10 * time.Second)
	_, err = h.rts.Pause(h.ctx, rt.ID, store.PauseUser)
	h.must(err)
	equal(t, "billed after pause", h.sandbox(id).BilledMicros, int64(310_000))
	h.account(690_000, 0)
}

func TestAutoPauseWhenCreditsRunOut(t *testing.T) {
	h := newHarness(t, testPricing)
	h.grant(150_000)
	a, b := h.runtime("a"), h.runtime("b")
	a, err := h.rts.Start(h.ctx, a.ID, nil)
	h.must(err)
	b, err = h.rts.Start(h.ctx, b.ID, nil)
	h.must(err)
	h.account(30_000, 0)

	// Two minutes: each owes a minute past its prepaid one (60_000 each)
	// and the org has 30_000.
	h.clock.Advance(2 * time.Minute)
	res := h.tick()
	equal(t, "shortfall", res.ShortfallMicros, int64(90_000))
	equal(t, "paused for credits", res.PausedCredits, 2)
	h.account(0, 0)
	for _, id := range []string{a.ID, b.ID} {
		rt := h.get(id)
		sb := h.sandbox(rt.CurrentSandboxID)
		if rt.Status != store.RuntimePaused || sb.PauseReason != store.PauseInsufficientCredits {
			t.Fatalf("runtime %s: status %s, pause reason %q", id, rt.Status, sb.PauseReason)
		}
	}

	// Resuming is refused until credits are granted; granting resumes
	// nothing by itself.
	_, err = h.rts.Resume(h.ctx, a.ID)
	wantCode(t, err, errdefs.ErrPaymentRequired, ledger.CodeInsufficientCredits)
	h.grant(1_000_000)
	equal(t, "status after grant", h.get(a.ID).Status, store.RuntimePaused)
	equal(t, "ticks resume nothing", h.tick().Settled, 0)
	equal(t, "status after tick", h.get(a.ID).Status, store.RuntimePaused)
	rt, err := h.rts.Resume(h.ctx, a.ID)
	h.must(err)
	equal(t, "status after resume", rt.Status, store.RuntimeRunning)
	equal(t, "pause reason after resume", h.sandbox(rt.CurrentSandboxID).PauseReason, store.PauseNone)
}

func TestMemberLimitPausesAndRefusesCompute(t *testing.T) {
	h := newHarness(t, testPricing)
	h.grant(1_000_000)
	a, b := h.runtime("a"), h.runtime("b")
	a, err := h.rts.Start(h.ctx, a.ID, nil)
	h.must(err)
	_, err = h.l.SetMemberLimit(h.ctx, h.ws, 1)
	h.must(err)
	_, err = h.l.AddMember(h.ctx, h.ws, h.user("alice@example.com"))
	h.must(err)
	equal(t, "status at the limit", h.get(a.ID).Status, store.RuntimeRunning)

	// The second member is one too many: compute pauses at once.
	h.clock.Advance(10 * time.Second)
	_, err = h.l.AddMember(h.ctx, h.ws, h.user("bob@example.com"))
	h.must(err)
	rt := h.get(a.ID)
	if rt.Status != store.RuntimePaused || h.sandbox(rt.CurrentSandboxID).PauseReason != store.PauseMemberLimitExceeded {
		t.Fatalf("after going over the limit: %+v", rt)
	}
	_, err = h.rts.Start(h.ctx, b.ID, nil)
	wantCode(t, err, errdefs.ErrPaymentRequired, ledger.CodeMemberLimitExceeded)
	_, err = h.rts.Resume(h.ctx, a.ID)
	wantCode(t, err, errdefs.ErrPaymentRequired, ledger.CodeMemberLimitExceeded)

	// Back under the limit, starts and resumes work again.
	h.must(h.l.RemoveMember(h.ctx, h.ws, h.user("bob@example.com")))
	_, err = h.rts.Start(h.ctx, b.ID, nil)
	h.must(err)
	_, err = h.rts.Resume(h.ctx, a.ID)
	h.must(err)

	// The settler enforces limits too (a limit lowered behind the
	// ledger's back).
	h.must(h.st.SetWorkspaceMemberLimit(h.ctx, h.ws.ID, 0))
	_, err = h.l.AddMember(h.ctx, h.ws, h.user("carol@example.com"))
	h.must(err)
	h.must(h.st.SetWorkspaceMemberLimit(h.ctx, h.ws.ID, 1))
	res := h.tick()
	equal(t, "paused for seats", res.PausedSeats, 2)
	for _, id := range []string{a.ID, b.ID} {
		equal(t, "status", h.get(id).Status, store.RuntimePaused)
	}
}

func TestConcurrentStartsShareTheCredits(t *testing.T) {
	h := newHarness(t, testPricing)
	h.grant(3 * slice)
	const n = 10
	rts := make([]store.Runtime, n)
	for i := range rts {
		rts[i] = h.runtime("p" + string(rune('a'+i)))
	}
	errs := make(chan error, n)
	for _, rt := range rts {
		go func() {
			_, err := h.rts.Start(h.ctx, rt.ID, nil)
			errs <- err
		}()
	}
	started := 0
	for range n {
		err := <-errs
		switch {
		case err == nil:
			started++
		case !errors.Is(err, errdefs.ErrPaymentRequired):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	equal(t, "started", started, 3)
	equal(t, "compute", h.fake.Count(), 3)
	h.account(0, 0)
}

func TestFreeComputeRecordsNothing(t *testing.T) {
	h := newHarness(t, ledger.Free)
	rt := h.runtime("p1")
	rt, err := h.rts.Start(h.ctx, rt.ID, nil)
	h.must(err)
	h.clock.Advance(time.Hour)
	equal(t, "settled", h.tick().Settled, 0)
	_, err = h.rts.Pause(h.ctx, rt.ID, store.PauseUser)
	h.must(err)
	_, err = h.rts.Resume(h.ctx, rt.ID)
	h.must(err)
	_, err = h.rts.Reset(h.ctx, rt.ID, false)
	h.must(err)
	equal(t, "journal entries", len(h.kinds()), 0)
	h.account(0, 0)
}

func TestGrantsAreIdempotent(t *testing.T) {
	h := newHarness(t, testPricing)
	m := ledger.Movement{OrgID: h.org.ID, AmountMicros: 5_000_000, IdempotencyKey: "invoice-17", Note: "march", Actor: "key-1"}
	first, replayed, err := h.l.Grant(h.ctx, m)
	h.must(err)
	equal(t, "first replayed", replayed, false)
	again, replayed, err := h.l.Grant(h.ctx, m)
	h.must(err)
	equal(t, "retry replayed", replayed, true)
	equal(t, "retry entry", again.ID, first.ID)
	h.account(5_000_000, 0)

	m.AmountMicros = 6_000_000
	_, _, err = h.l.Grant(h.ctx, m)
	wantCode(t, err, errdefs.ErrConflict, ledger.CodeKeyReused)
	_, _, err = h.l.SetBalance(h.ctx, ledger.Movement{OrgID: h.org.ID, AmountMicros: 5_000_000, IdempotencyKey: "invoice-17"})
	wantCode(t, err, errdefs.ErrConflict, ledger.CodeKeyReused)
	h.account(5_000_000, 0)

	set := ledger.Movement{OrgID: h.org.ID, AmountMicros: 2_000_000, IdempotencyKey: "fix-1"}
	_, _, err = h.l.SetBalance(h.ctx, set)
	h.must(err)
	h.grant(1)
	_, replayed, err = h.l.SetBalance(h.ctx, set)
	h.must(err)
	equal(t, "adjustment replayed", replayed, true)
	h.account(2_000_001, 0)

	_, _, err = h.l.Grant(h.ctx, ledger.Movement{OrgID: h.org.ID, AmountMicros: 0, IdempotencyKey: "zero"})
	equal(t, "zero grant", errors.Is(err, errdefs.ErrInvalidArgument), true)
}

// TestReserveReleasesAnInterruptedHold: a hold left open by a start that
// never finished (the server died) is released by the next reservation,
// so credits are never stuck.
func TestReserveReleasesAnInterruptedHold(t *testing.T) {
	h := newHarness(t, testPricing)
	h.grant(slice)
	rt := h.runtime("p1")
	// While the provider creates the compute, the slice is held.
	var during []int64
	h.hooked.beforeCreate = func() {
		a, err := h.l.Account(h.ctx, h.org.ID)
		h.must(err)
		during = []int64{a.BalanceMicros, a.HeldMicros}
	}
	_, err := h.rts.Start(h.ctx, rt.ID, nil)
	h.must(err)
	h.hooked.beforeCreate = nil
	if !slices.Equal(during, []int64{slice, slice}) {
		t.Fatalf("balance and held while creating = %v, want both %d", during, slice)
	}
	h.account(0, 0)

	// Recovery of a start the server never finished: the reconciler kills
	// the row, and settling it releases the hold.
	rt2 := h.runtime("p2")
	h.grant(slice)
	sb := store.Sandbox{ID: "11111111-1111-1111-1111-111111111111", OrgID: h.org.ID, WorkspaceID: h.ws.ID,
		RuntimeID: rt2.ID, Kind: store.KindRuntime, State: store.SandboxStarting, Provider: fake.Name, CPUMillis: 1000}
	h.must(h.st.InTx(h.ctx, func(q store.Queries) error {
		if err := h.l.Meter().Reserve(h.ctx, q, sb, h.clock.Now()); err != nil {
			return err
		}
		return q.CreateSandbox(h.ctx, sb)
	}))
	h.account(slice, slice)
	h.must(h.st.InTx(h.ctx, func(q store.Queries) error {
		return h.l.Meter().Settle(h.ctx, q, sb.ID, h.clock.Now())
	}))
	h.account(slice, 0)
}

var _ runtime.Billing = (*ledger.Meter)(nil)

// user returns the id of the user with email, made on first use.
func (h *harness) user(email string) string {
	h.t.Helper()
	u, err := h.st.GetUserByEmail(h.ctx, email)
	if errdefs.IsNotFound(err) {
		u = store.User{ID: uuid.NewString(), Email: email, CreatedAt: h.clock.Now()}
		err = h.st.CreateUser(h.ctx, u)
	}
	h.must(err)
	return u.ID
}
