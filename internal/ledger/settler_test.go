package ledger_test

import (
	"fmt"
	"log/slog"
	"path/filepath"
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

// BenchmarkSettlerTick10k measures one settler tick over 10,000 running
// sandboxes in a real SQLite file: the scan, 10,000 guarded deductions in
// transactions of 500, and their journal entries.
//
//	go test -run '^$' -bench SettlerTick10k -benchtime 5x ./internal/ledger/
func BenchmarkSettlerTick10k(b *testing.B) {
	const n = 10_000
	ctx := b.Context()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "paddock.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	c := newClock()
	t0 := c.Now()
	orgs := make([]store.Org, 10)
	err = st.InTx(ctx, func(q store.Queries) error {
		for i := range orgs {
			orgs[i] = store.Org{ID: uuid.NewString(), Name: fmt.Sprintf("org-%d", i), CreatedAt: t0}
			if err := q.CreateOrg(ctx, orgs[i]); err != nil {
				return err
			}
			if _, err := q.PostCredit(ctx, store.CreditPosting{OrgID: orgs[i].ID, Kind: store.EntryGrant,
				AmountMicros: 1 << 50, IdempotencyKey: "seed"}); err != nil {
				return err
			}
		}
		for i := range n {
			err := q.CreateSandbox(ctx, store.Sandbox{
				ID: uuid.NewString(), OrgID: orgs[i%len(orgs)].ID, Kind: store.KindTask, State: store.SandboxRunning,
				Provider: "docker", CPUMillis: 1000, MemoryMB: 1024, StartedAt: t0, LastSettledAt: t0, CreatedAt: t0,
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	l := ledger.New(ledger.Config{
		Store: st, Meter: ledger.NewMeter(ledger.DefaultPricing), Now: c.Now, Logger: slog.New(slog.DiscardHandler),
	})
	b.ResetTimer()
	for b.Loop() {
		c.Advance(30 * time.Second)
		res, err := l.Tick(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if res.Settled != n {
			b.Fatalf("settled %d of %d", res.Settled, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/sandbox")
}
