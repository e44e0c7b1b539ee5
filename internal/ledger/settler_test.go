package ledger_test

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/ledger"
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
