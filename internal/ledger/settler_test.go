package ledger_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

type tick struct {
	res ledger.TickResult
	err error
}

func TestSettlerRunsTicksUntilStopped(t *testing.T) {
	h := newHarness(t, testPricing)
	h.grant(1_000_000)
	rt := h.runtime("p1")
	rt, err := h.rts.Start(h.ctx, rt.ID, nil)
	h.must(err)

	ticks := make(chan time.Time)
	results := make(chan tick, 1)
	s := ledger.NewSettler(h.l, ledger.SettlerConfig{
		Ticks:     ticks,
		AfterTick: func(res ledger.TickResult, err error) { results <- tick{res, err} },
	})
	s.Start()
	defer s.Stop()

	h.clock.Advance(2 * time.Minute)
	ticks <- h.clock.Now()
	got := <-results
	h.must(got.err)
	equal(t, "charged", got.res.ChargedMicros, int64(60_000))
	equal(t, "billed", h.sandbox(rt.CurrentSandboxID).BilledMicros, int64(120_000))

	ticks <- h.clock.Now()
	got = <-results
	equal(t, "settled on a second tick at the same time", got.res.Settled, 0)

	s.Stop()
	s.Stop() // idempotent
	select {
	case ticks <- h.clock.Now():
		t.Fatal("a stopped settler took a tick")
	default:
	}
}

func TestSettlerStopsWithoutStart(t *testing.T) {
	h := newHarness(t, testPricing)
	ledger.NewSettler(h.l, ledger.SettlerConfig{}).Stop()
}

func TestSettlerWithItsOwnTimer(t *testing.T) {
	h := newHarness(t, testPricing)
	s := ledger.NewSettler(h.l, ledger.SettlerConfig{Interval: time.Hour})
	s.Start()
	s.Stop() // joins the goroutine and stops its ticker; goleak checks
}

// pauses records the runtimes a ledger pauses, leaving their rows as they
// are.
type pauses struct {
	mu  sync.Mutex
	got []string // "runtime reason"
}

func (p *pauses) Pause(_ context.Context, runtimeID string, reason store.PauseReason) (store.Runtime, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, runtimeID+" "+string(reason))
	return store.Runtime{ID: runtimeID}, nil
}

// TestTickIsolatesAFailingOrg makes one org's settlements fail for real
// (SQLite refuses to write its account, after its journal entries and
// rows were written) and has the store refuse one settlement of another
// org (its idempotency key was taken). The tick still charges everyone
// else, pauses an org whose credits ran out and a workspace over its
// member limit, counts and logs both orgs by id, and leaves the failing
// org's books as they were; once the fault is gone, the next tick charges
// it from where it stood.
func TestTickIsolatesAFailingOrg(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "paddock.db")
	st, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	c := newClock()
	t0 := c.Now()

	// Three orgs, each with a workspace, credits and two running one-core
	// sandboxes (a minute costs 60,000 each). "poor" can pay for a minute
	// of one of them.
	type org struct {
		store.Org
		ws  store.Workspace
		sbs []store.Sandbox
	}
	newOrg := func(name string, credits int64) org {
		o := org{Org: store.Org{ID: uuid.NewString(), Name: name}}
		must(st.CreateOrg(ctx, o.Org))
		o.ws = store.Workspace{ID: uuid.NewString(), OrgID: o.ID, Name: "dev"}
		must(st.CreateWorkspace(ctx, o.ws))
		_, err := st.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: credits, IdempotencyKey: "grant"})
		must(err)
		for range 2 {
			sb := store.Sandbox{
				ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: o.ws.ID, ProjectID: uuid.NewString(), RuntimeID: uuid.NewString(),
				Kind: store.KindRuntime, State: store.SandboxRunning, Provider: "fake", CPUMillis: 1000, MemoryMB: 256,
				StartedAt: t0, LastSettledAt: t0, RunningSince: t0, CreatedAt: t0,
			}
			must(st.CreateSandbox(ctx, sb))
			o.sbs = append(o.sbs, sb)
		}
		return o
	}
	poor, failing, refusing := newOrg("poor", slice), newOrg("failing", 1_000_000), newOrg("refusing", 1_000_000)

	// The failing org's workspace is over its member limit.
	for _, m := range []string{"ann@example.com", "bob@example.com"} {
		u := store.User{ID: uuid.NewString(), Email: m, CreatedAt: t0}
		must(st.CreateUser(ctx, u))
		must(st.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: failing.ID, WorkspaceID: failing.ws.ID, UserID: u.ID, CreatedAt: t0}))
	}
	must(st.SetWorkspaceMemberLimit(ctx, failing.ws.ID, 1))

	// The fault: SQLite refuses any write to the failing org's account.
	db, err := sql.Open("sqlite", path)
	must(err)
	defer db.Close()
	_, err = db.ExecContext(ctx, fmt.Sprintf(`CREATE TRIGGER fail_org BEFORE UPDATE ON credit_accounts
		WHEN OLD.org_id = '%s' BEGIN SELECT RAISE(ABORT, 'injected fault'); END`, failing.ID))
	must(err)

	// The refusal: the key the settler will use for the refusing org's
	// first sandbox is taken.
	t1 := t0.Add(time.Minute)
	key := fmt.Sprintf("settle:%s:%d-%d", refusing.sbs[0].ID, t0.UnixMicro(), t1.UnixMicro())
	_, err = st.PostCredit(ctx, store.CreditPosting{OrgID: refusing.ID, Kind: store.EntryGrant, AmountMicros: 1, IdempotencyKey: key})
	must(err)

	var logs bytes.Buffer
	p := &pauses{}
	l := ledger.New(ledger.Config{
		Store: st, Meter: ledger.NewMeter(testPricing), Runtimes: p, Now: c.Now,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	billed := func(sb store.Sandbox) (int64, time.Time) {
		t.Helper()
		got, err := st.GetSandbox(ctx, sb.ID)
		must(err)
		return got.BilledMicros, got.LastSettledAt
	}
	balance := func(o org) int64 {
		t.Helper()
		a, err := st.GetCreditAccount(ctx, o.ID)
		must(err)
		return a.BalanceMicros
	}

	c.Advance(time.Minute)
	res, err := l.Tick(ctx)
	must(err)
	equal(t, "settled", res.Settled, 3) // poor's two, refusing's second
	equal(t, "failed orgs", res.FailedOrgs, 2)
	equal(t, "shortfall", res.ShortfallMicros, int64(slice))
	equal(t, "paused for credits, for seats", [2]int{res.PausedCredits, res.PausedSeats}, [2]int{2, 2})
	wantPauses := []string{
		poor.sbs[0].RuntimeID + " " + string(store.PauseInsufficientCredits),
		poor.sbs[1].RuntimeID + " " + string(store.PauseInsufficientCredits),
		failing.sbs[0].RuntimeID + " " + string(store.PauseMemberLimitExceeded),
		failing.sbs[1].RuntimeID + " " + string(store.PauseMemberLimitExceeded),
	}
	slices.Sort(wantPauses)
	slices.Sort(p.got)
	equal(t, "pauses", strings.Join(p.got, ", "), strings.Join(wantPauses, ", "))
	equal(t, "poor's balance", balance(poor), int64(0))
	for _, sb := range failing.sbs {
		b, at := billed(sb)
		if b != 0 || !at.Equal(t0) {
			t.Fatalf("failing org's row %s after the tick: billed %d up to %v, want its books untouched", sb.ID, b, at)
		}
	}
	es, _, err := st.ListJournal(ctx, store.JournalFilter{OrgID: failing.ID, Kind: store.EntryDeduction}, store.Page{})
	must(err)
	equal(t, "failing org's deductions", len(es), 0)
	equal(t, "failing org's balance", balance(failing), int64(1_000_000))
	b, _ := billed(refusing.sbs[0])
	equal(t, "refused row billed", b, int64(0))
	b, _ = billed(refusing.sbs[1])
	equal(t, "refusing org's other row billed", b, int64(slice))
	for _, o := range []org{failing, refusing} {
		if !strings.Contains(logs.String(), "org="+o.ID) {
			t.Fatalf("the log does not name org %s (%s):\n%s", o.Name, o.ID, logs.String())
		}
	}

	// The fault is gone: the next tick charges the failing org for both
	// minutes, and the refused row from where it stood.
	_, err = db.ExecContext(ctx, "DROP TRIGGER fail_org")
	must(err)
	c.Advance(time.Minute)
	res, err = l.Tick(ctx)
	must(err)
	equal(t, "settled on the next tick", res.Settled, 6)
	equal(t, "failed orgs on the next tick", res.FailedOrgs, 0)
	for _, sb := range append(failing.sbs, refusing.sbs[0]) {
		b, _ := billed(sb)
		equal(t, "billed for two minutes", b, int64(2*slice))
	}
	equal(t, "failing org's balance", balance(failing), int64(1_000_000-4*slice))
}

// TestTickSettlesAnOrgLargerThanABatch: a tick settles in transactions of
// whole orgs, about 500 rows each; an org with more running rows than
// that spans several, and every row is charged once.
func TestTickSettlesAnOrgLargerThanABatch(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := newClock()
	t0 := c.Now()
	var rows []store.Sandbox
	err = st.InTx(ctx, func(q store.Queries) error {
		for i, n := range []int{3, 1234, 7} {
			o := store.Org{ID: uuid.NewString(), Name: fmt.Sprintf("org-%d", i)}
			if err := q.CreateOrg(ctx, o); err != nil {
				return err
			}
			if _, err := q.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 1 << 40, IdempotencyKey: "grant"}); err != nil {
				return err
			}
			for range n {
				sb := store.Sandbox{ID: uuid.NewString(), OrgID: o.ID, Kind: store.KindTask, State: store.SandboxRunning,
					Provider: "fake", CPUMillis: 1000, StartedAt: t0, LastSettledAt: t0, CreatedAt: t0}
				if err := q.CreateSandbox(ctx, sb); err != nil {
					return err
				}
				rows = append(rows, sb)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(ledger.Config{Store: st, Meter: ledger.NewMeter(testPricing), Now: c.Now})
	c.Advance(time.Minute)
	res, err := l.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "scanned, settled", [2]int{res.Scanned, res.Settled}, [2]int{len(rows), len(rows)})
	equal(t, "charged", res.ChargedMicros, int64(len(rows)*slice))
	for _, sb := range rows {
		got, err := st.GetSandbox(ctx, sb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.BilledMicros != slice || !got.LastSettledAt.Equal(c.Now()) {
			t.Fatalf("row %s: billed %d up to %v, want %d up to %v", sb.ID, got.BilledMicros, got.LastSettledAt, slice, c.Now())
		}
	}
}
