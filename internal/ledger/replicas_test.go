package ledger_test

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/ledger"
)

// TestOverlappingSettlersChargeOnce: two replicas' settlers tick at the
// same moment over one store, as an old lease holder's last tick and its
// successor's first could at a takeover. Each row's watermark and billing
// version fence them: every interval is charged exactly once, whichever
// settles it, and the other finds it settled already or stale.
func TestOverlappingSettlersChargeOnce(t *testing.T) {
	h := newHarness(t, testPricing)
	h.grant(10_000_000)
	const n = 12
	var ids []string
	for i := range n {
		rt := h.runtime("p" + string(rune('a'+i)))
		rt, err := h.rts.Start(h.ctx, rt.ID, nil)
		h.must(err)
		ids = append(ids, rt.CurrentSandboxID)
	}
	other := ledger.New(ledger.Config{Store: h.st, Meter: h.l.Meter(), Runtimes: h.rts, Now: h.clock.Now, Logger: slog.New(slog.DiscardHandler)})
	h.clock.Advance(5 * time.Minute)

	var (
		wg   sync.WaitGroup
		res  [2]ledger.TickResult
		errs [2]error
	)
	for i, l := range []*ledger.Ledger{h.l, other} {
		wg.Go(func() { res[i], errs[i] = l.Tick(h.ctx) })
	}
	wg.Wait()
	h.must(errs[0])
	h.must(errs[1])
	equal(t, "rows settled by both", res[0].Settled+res[1].Settled, n)
	equal(t, "charged by both", res[0].ChargedMicros+res[1].ChargedMicros, int64(n*240_000))
	for _, id := range ids {
		equal(t, "billed "+id, h.sandbox(id).BilledMicros, int64(300_000))
	}
	h.account(10_000_000-n*300_000, 0)
}
