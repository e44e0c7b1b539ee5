package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/store"
)

// testEgress checks that decisions round-trip, list per runtime newest
// first across pages, and prune by age.
func testEgress(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	rtA, rtB := uuid.NewString(), uuid.NewString()
	var want []store.EgressDecision
	var batch []store.EgressDecision
	for i := range 7 {
		d := store.EgressDecision{
			ID: uuid.NewString(), OrgID: uuid.NewString(), WorkspaceID: uuid.NewString(),
			RuntimeID: rtA, SandboxID: uuid.NewString(), At: f.next(),
			Allowed: i%2 == 0, Reason: "because", Method: "CONNECT", Host: "pypi.org", Port: 443,
			Addr: "192.0.2.7:443", BytesUp: int64(100 + i), BytesDown: int64(1000 + i),
			Duration: time.Duration(i+1) * 1500 * time.Microsecond, Brokered: i == 3,
		}
		batch = append(batch, d)
		d.At = d.At.UTC().Truncate(time.Microsecond)
		want = append(want, d)
	}
	batch = append(batch, store.EgressDecision{ID: uuid.NewString(), RuntimeID: rtB, At: f.next(), Method: "GET", Host: "other"})
	if err := s.RecordEgress(f.ctx, batch); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(want)
	var got []store.EgressDecision
	page := store.Page{Limit: 3}
	for {
		ds, next, err := s.ListEgress(f.ctx, rtA, page)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ds...)
		if next == "" {
			break
		}
		page.Cursor = next
	}
	if !slices.EqualFunc(got, want, func(a, b store.EgressDecision) bool { return a == b }) {
		t.Fatalf("ListEgress:\n got %+v\nwant %+v", got, want)
	}
	n, err := s.PruneEgress(f.ctx, want[2].At)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("PruneEgress removed %d, want 4 (the oldest of runtime A)", n)
	}
	left, _, err := s.ListEgress(f.ctx, rtA, store.Page{})
	if err != nil || len(left) != 3 {
		t.Fatalf("after prune: %d decisions, %v; want 3", len(left), err)
	}
}
