package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// snapshot stores a snapshot named name of rt in w.
func (f *fixture) snapshot(w store.Workspace, rt store.Runtime, name string, size int64) store.Snapshot {
	f.t.Helper()
	s := store.Snapshot{
		ID: uuid.NewString(), OrgID: w.OrgID, WorkspaceID: w.ID, RuntimeID: rt.ID, Name: name,
		Provider: "docker", Image: "paddock/debian:bookworm", Config: store.RuntimeConfig{Provider: "docker", Image: "paddock/debian:bookworm", CPUMillis: 500},
		Destination: "local", Location: "snap/" + name, SizeBytes: size, CreatedAt: f.next(),
	}
	must(f.t, f.s.CreateSnapshot(f.ctx, s))
	s.CreatedAt = ts(s.CreatedAt)
	s.BilledUntil = s.CreatedAt
	return s
}

func testSnapshots(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w, other := f.workspace(o), f.workspace(o)
	rt, rt2 := f.runtime(w), f.runtime(w)

	a := f.snapshot(w, rt, "a", 10)
	b := f.snapshot(w, rt2, "b", 20)
	c := f.snapshot(w, rt, "c", 0)
	d := f.snapshot(other, f.runtime(other), "a", 5) // a name is per workspace

	got, err := s.GetSnapshot(ctx, a.ID)
	must(t, err)
	equal(t, "get", got, a)
	if err := s.CreateSnapshot(ctx, store.Snapshot{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID, RuntimeID: rt.ID,
		Name: "a", Destination: "local", Location: "x"}); !isCode(err, "snapshot_exists") {
		t.Fatalf("a taken name: err = %v, want snapshot_exists", err)
	}
	if err := s.CreateSnapshot(ctx, store.Snapshot{ID: uuid.NewString(), OrgID: o.ID, WorkspaceID: w.ID}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("no runtime: err = %v, want invalid argument", err)
	}

	page1, next, err := s.ListSnapshots(ctx, w.ID, "", store.Page{Limit: 2})
	must(t, err)
	equal(t, "page 1", page1, []store.Snapshot{a, b})
	page2, _, err := s.ListSnapshots(ctx, w.ID, "", store.Page{Limit: 2, Cursor: next})
	must(t, err)
	equal(t, "page 2", page2, []store.Snapshot{c})
	ofRT, _, err := s.ListSnapshots(ctx, w.ID, rt.ID, store.Page{})
	must(t, err)
	equal(t, "of one runtime", ofRT, []store.Snapshot{a, c})
	var all []store.Snapshot
	for after := ""; ; {
		got, err := s.ListSnapshotsAfter(ctx, after, 2)
		must(t, err)
		if len(got) == 0 {
			break
		}
		all, after = append(all, got...), got[len(got)-1].ID
	}
	for _, want := range []store.Snapshot{a, b, c, d} {
		found := false
		for _, g := range all {
			found = found || g.ID == want.ID
		}
		if !found {
			t.Fatalf("the settler's scan misses %s", want.Name)
		}
	}

	must(t, s.DeleteSnapshot(ctx, a.ID))
	if _, err := s.GetSnapshot(ctx, a.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("deleted: err = %v, want not found", err)
	}
	if err := s.DeleteSnapshot(ctx, a.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("deleted twice: err = %v, want not found", err)
	}
}

// isCode reports whether err is a public error with code.
func isCode(err error, code string) bool {
	e, ok := errdefs.Public(err)
	return ok && e.Code == code
}

// testSnapshotCharges: a storage charge moves the snapshot's watermark,
// takes at most the balance (the rest is shortfall) and is journaled with
// its runtime and workspace; one from a stale watermark changes nothing.
func testSnapshotCharges(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)
	rt := f.runtime(w)
	snap := f.snapshot(w, rt, "billed", 1<<30)
	_, err := s.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant, AmountMicros: 1000, IdempotencyKey: "grant"})
	must(t, err)

	from, mid := snap.BilledUntil, snap.BilledUntil.Add(time.Hour)
	e, err := s.ChargeSnapshotStorage(ctx, store.SnapshotCharge{OrgID: o.ID, SnapshotID: snap.ID, From: from, UpTo: mid, AmountMicros: 600})
	must(t, err)
	if e.Kind != store.EntryDeduction || e.AmountMicros != -600 || e.BalanceAfterMicros != 400 || e.RuntimeID != rt.ID || e.WorkspaceID != w.ID || e.SandboxID != "" {
		t.Fatalf("charge entry %+v", e)
	}
	got, err := s.GetSnapshot(ctx, snap.ID)
	must(t, err)
	if !got.BilledUntil.Equal(ts(mid)) {
		t.Fatalf("watermark %s, want %s", got.BilledUntil, ts(mid))
	}
	if _, err := s.ChargeSnapshotStorage(ctx, store.SnapshotCharge{OrgID: o.ID, SnapshotID: snap.ID, From: from, UpTo: mid, AmountMicros: 600}); !isCode(err, "settlement_stale") {
		t.Fatalf("the same period again: err = %v, want settlement_stale", err)
	}
	if _, err := s.ChargeSnapshotStorage(ctx, store.SnapshotCharge{OrgID: f.org().ID, SnapshotID: snap.ID, From: mid, UpTo: mid.Add(time.Hour), AmountMicros: 1}); !errdefs.IsNotFound(err) {
		t.Fatalf("another org's snapshot: err = %v, want not found", err)
	}
	e, err = s.ChargeSnapshotStorage(ctx, store.SnapshotCharge{OrgID: o.ID, SnapshotID: snap.ID, From: mid, UpTo: mid.Add(time.Hour), AmountMicros: 600})
	must(t, err)
	if e.AmountMicros != -400 || e.ShortfallMicros != 200 || e.BalanceAfterMicros != 0 {
		t.Fatalf("charge past the balance: %+v", e)
	}
	a, err := s.GetCreditAccount(ctx, o.ID)
	must(t, err)
	if a.BalanceMicros != 0 {
		t.Fatalf("balance %d, want 0", a.BalanceMicros)
	}
}
