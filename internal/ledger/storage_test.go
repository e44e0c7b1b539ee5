package ledger_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/store"
)

// snapshot stores a snapshot of size bytes of a runtime of h's workspace,
// taken at the clock's time.
func (h *harness) snapshot(name string, size int64) store.Snapshot {
	h.t.Helper()
	rt := h.runtime(name)
	s := store.Snapshot{
		ID: uuid.NewString(), OrgID: h.org.ID, WorkspaceID: h.ws.ID, RuntimeID: rt.ID, Name: name,
		Provider: rt.Config.Provider, Image: rt.Config.Image, Config: rt.Config,
		Destination: "local", Location: h.org.ID + "/" + name, SizeBytes: size, CreatedAt: h.clock.Now(),
	}
	h.must(h.st.CreateSnapshot(h.ctx, s))
	return s
}

// TestSettlerChargesSnapshotStorage: each round charges a snapshot's size
// times the hours since its watermark at the snapshot rate, once; a
// deleted snapshot is charged no more; no rate charges nothing.
func TestSettlerChargesSnapshotStorage(t *testing.T) {
	p := testPricing
	p.SnapshotMicros = 10_000 // per GiB-hour
	h := newHarness(t, p)
	h.grant(1_000_000)
	big := h.snapshot("big", 2<<30) // 2 GiB
	small := h.snapshot("small", 1<<20)

	h.clock.Advance(3 * time.Hour)
	res := h.tick()
	// 2 GiB × 3 h × 10,000 = 60,000; 1 MiB × 3 h = 29.29… → 29.
	equal(t, "charged", res.Storage.ChargedMicros, int64(60_000+29))
	equal(t, "snapshots charged", res.Storage.Charged, 2)
	h.account(1_000_000-60_029, 0)
	es, _, err := h.l.Journal(h.ctx, store.JournalFilter{OrgID: h.org.ID, RuntimeID: big.RuntimeID}, store.Page{})
	h.must(err)
	if len(es) != 1 || es[0].Kind != store.EntryDeduction || es[0].AmountMicros != -60_000 || es[0].SandboxID != "" ||
		!es[0].PeriodEnd.Equal(h.clock.Now()) || es[0].PeriodEnd.Sub(es[0].PeriodStart) != 3*time.Hour {
		t.Fatalf("the big snapshot's entries: %+v", es)
	}

	res = h.tick()
	equal(t, "charged again at the same time", res.Storage.Charged, 0)

	h.must(h.st.DeleteSnapshot(h.ctx, big.ID))
	h.clock.Advance(time.Hour)
	res = h.tick()
	equal(t, "charged after the big one's deletion", res.Storage.ChargedMicros, int64(9))
	got, err := h.st.GetSnapshot(h.ctx, small.ID)
	h.must(err)
	if !got.BilledUntil.Equal(h.clock.Now()) {
		t.Fatalf("small's watermark %s, want %s", got.BilledUntil, h.clock.Now())
	}
	h.account(1_000_000-60_029-9, 0)

	free := newHarness(t, testPricing)
	free.grant(1_000)
	free.snapshot("kept", 1<<30)
	free.clock.Advance(24 * time.Hour)
	equal(t, "charged without a snapshot rate", free.tick().Storage.Charged, 0)
	free.account(1_000, 0)
}

// TestStorageCostRoundsDown: a period too short to be worth a
// micro-credit costs nothing (its watermark then stays, so it is charged
// later), and huge sizes do not overflow.
func TestStorageCostRoundsDown(t *testing.T) {
	equal(t, "1 GiB for an hour", ledger.StorageCost(1<<30, time.Hour, 10_000), int64(10_000))
	equal(t, "1 KiB for a second", ledger.StorageCost(1<<10, time.Second, 10_000), int64(0))
	equal(t, "nothing", ledger.StorageCost(0, time.Hour, 10_000), int64(0))
	equal(t, "1 PiB for a year", ledger.StorageCost(1<<50, 365*24*time.Hour, 100_000_000), int64(1<<20*365*24*100_000_000))
}
