package ledger_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/store"
)

// TestSettlerOnItsOwnTimer runs the settler on its own ticker in a
// synctest bubble, whose clock the services share: every tick charges
// each running second once, and when the org's credits run out the
// settler pauses its runtime with reason insufficient_credits, after
// which nothing more is charged.
func TestSettlerOnItsOwnTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessAt(t, testPricing, nil, time.Now)
		h.grant(200_000) // 200 core-seconds
		start := time.Now().UTC()
		rt, err := h.rts.Start(h.ctx, h.runtime("p").ID, nil)
		h.must(err)
		id := rt.CurrentSandboxID
		equal(t, "billed at start (the prepaid minute)", h.sandbox(id).BilledMicros, int64(slice))

		s := ledger.NewSettler(h.l, ledger.SettlerConfig{Interval: 10 * time.Second})
		s.Start()
		defer s.Stop()

		// Ticks at 10 s, 20 s, … : none charges inside the prepaid
		// minute, and each after it charges the seconds since the last.
		time.Sleep(55 * time.Second)
		synctest.Wait()
		equal(t, "billed in the prepaid minute", h.sandbox(id).BilledMicros, int64(slice))
		time.Sleep(100 * time.Second) // to 155 s: the last tick was at 150 s
		synctest.Wait()
		equal(t, "billed at the 150 s tick", h.sandbox(id).BilledMicros, int64(150_000))
		equal(t, "status while credits last", h.get(rt.ID).Status, store.RuntimeRunning)

		// The credits run out at 200 s: the tick that finds them gone
		// pauses the runtime.
		time.Sleep(time.Minute)
		synctest.Wait()
		got, sb := h.get(rt.ID), h.sandbox(id)
		if got.Status != store.RuntimePaused || sb.PauseReason != store.PauseInsufficientCredits {
			t.Fatalf("out of credits: runtime %s, row %s (%s); want paused for insufficient credits", got.Status, sb.State, sb.PauseReason)
		}
		billed := sb.BilledMicros
		equal(t, "billed when paused (all 200 s the credits paid for)", billed, int64(200_000))
		equal(t, "paused at the tick that found the credits gone", sb.PausedAt, start.Add(200*time.Second))
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		equal(t, "billed while paused", h.sandbox(id).BilledMicros, billed)
	})
}
