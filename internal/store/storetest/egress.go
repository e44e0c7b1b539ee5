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
		if !d.Allowed {
			d.Refusal = "not_allowed"
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

// testSandboxEgress checks that a sandbox's decisions about some hosts on
// one port are read oldest first, after a decision already read, and
// nothing of other sandboxes, hosts or ports.
func testSandboxEgress(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	rt, sb := uuid.NewString(), uuid.NewString()
	mk := func(sandbox, host string, port int) store.EgressDecision {
		return store.EgressDecision{ID: uuid.NewString(), RuntimeID: rt, SandboxID: sandbox, At: f.next().UTC().Truncate(time.Microsecond),
			Method: "CONNECT", Host: host, Port: port, Reason: "no allow rule matches", Refusal: "not_allowed"}
	}
	ds := []store.EgressDecision{
		mk(sb, "api.anthropic.com", 443), mk(uuid.NewString(), "api.anthropic.com", 443),
		mk(sb, "api.anthropic.com", 80), mk(sb, "pypi.org", 443), mk(sb, "api.openai.com", 443),
	}
	// Two decisions at the same instant are told apart by id.
	same := mk(sb, "api.anthropic.com", 443)
	twin := mk(sb, "api.anthropic.com", 443)
	twin.At = same.At
	ds = append(ds, same, twin)
	if err := s.RecordEgress(f.ctx, ds); err != nil {
		t.Fatal(err)
	}
	want := []store.EgressDecision{ds[0], ds[4], same, twin}
	if same.ID > twin.ID {
		want[2], want[3] = twin, same
	}
	q := store.EgressQuery{SandboxID: sb, Hosts: []string{"api.anthropic.com", "api.openai.com"}, Port: 443}
	got, err := s.SandboxEgress(f.ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("SandboxEgress:\n got %+v\nwant %+v", got, want)
	}
	q.AfterAt, q.AfterID, q.Limit = want[1].At, want[1].ID, 1
	if got, err = s.SandboxEgress(f.ctx, q); err != nil || !slices.Equal(got, want[2:3]) {
		t.Fatalf("after %s, limit 1: %+v, %v; want %+v", want[1].ID, got, err, want[2:3])
	}
	q.AfterAt, q.AfterID, q.Limit = want[2].At, want[2].ID, 0
	if got, err = s.SandboxEgress(f.ctx, q); err != nil || !slices.Equal(got, want[3:]) {
		t.Fatalf("after the twin's first: %+v, %v; want %+v", got, err, want[3:])
	}
}
