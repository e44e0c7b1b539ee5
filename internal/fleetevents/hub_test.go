package fleetevents

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/store/sqlite"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.WithPostgres(m)) }

func take(t *testing.T, s *Stream) Event {
	t.Helper()
	select {
	case e := <-s.Events():
		return e
	default:
		t.Fatal("no event was fanned out to the stream")
		return Event{}
	}
}

// TestFanOut: every stream hears every event, in order, numbered by the
// hub; a stream that falls Buffer events behind is ended and the others
// go on; Close ends the rest, and a stream opened after it is ended.
func TestFanOut(t *testing.T) {
	h := New(Config{Replica: "a", Buffer: 2})
	slow, fast := h.Open(""), h.Open("")
	h.Runtime(runtime.Event{Kind: runtime.EventCreated, Runtime: store.Runtime{ID: "r1"}})
	h.Egress(store.EgressDecision{ID: "d1", RuntimeID: "r1"})
	if e := take(t, fast); e.Seq != 1 || e.Runtime == nil || e.Runtime.Runtime.ID != "r1" {
		t.Fatalf("first event %+v", e)
	}
	if e := take(t, fast); e.Seq != 2 || e.Egress == nil || e.Egress.ID != "d1" {
		t.Fatalf("second event %+v", e)
	}
	h.Provision(runtime.Provision{ID: "p1"})
	select {
	case <-slow.Ended():
	default:
		t.Fatal("a stream 3 events behind with a buffer of 2 was not ended")
	}
	if e := take(t, fast); e.Seq != 3 || e.Provision == nil || e.Provision.ID != "p1" {
		t.Fatalf("third event %+v", e)
	}
	select {
	case <-fast.Ended():
		t.Fatal("the stream that kept up was ended")
	default:
	}
	h.Close()
	<-fast.Ended()
	<-h.Open("").Ended()
	fast.Close() // after the hub's end: nothing more
}

// TestReceived: what another replica sent is fanned out with the rows
// read here, a deleted runtime's with the ids sent, an egress decision
// whole; this replica's own messages and those of a runtime gone since
// are not.
func TestReceived(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := New(Config{Replica: "b", Rows: st})
	t.Cleanup(h.Close)
	s := h.Open("")
	send := func(m message) {
		p, err := m.encode()
		if err != nil {
			t.Fatal(err)
		}
		h.received(p)
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	send(runtimeMessage("b", runtime.Event{Kind: runtime.EventDeleted, Runtime: store.Runtime{ID: "own", OrgID: "o"}, At: at}))
	send(runtimeMessage("a", runtime.Event{Kind: runtime.EventRunning, Runtime: store.Runtime{ID: "gone", OrgID: "o"}, At: at}))
	send(runtimeMessage("a", runtime.Event{Kind: runtime.EventDeleted, Reason: "x",
		Runtime: store.Runtime{ID: "r1", OrgID: "o", WorkspaceID: "w", ProjectID: "p"}, At: at}))
	send(egressMessage("a", store.EgressDecision{ID: "d1", OrgID: "o", WorkspaceID: "w", RuntimeID: "r1", At: at,
		Host: "pypi.org", Port: 443, Allowed: true, BytesDown: 7, Duration: time.Second}))
	e := take(t, s)
	if e.Runtime == nil || e.Runtime.Kind != runtime.EventDeleted || !reflect.DeepEqual(e.Runtime.Runtime, store.Runtime{ID: "r1", OrgID: "o", WorkspaceID: "w", ProjectID: "p"}) ||
		e.Runtime.Reason != "x" || !e.Runtime.At.Equal(at) {
		t.Fatalf("the deletion received is %+v", e.Runtime)
	}
	e = take(t, s)
	if d := e.Egress; d == nil || d.ID != "d1" || d.OrgID != "o" || d.Host != "pypi.org" || !d.Allowed || d.BytesDown != 7 || d.Duration != time.Second || !d.At.Equal(at) {
		t.Fatalf("the decision received is %+v", e.Egress)
	}
	select {
	case e := <-s.Events():
		t.Fatalf("fanned out besides: %+v", e)
	default:
	}
}

// TestMessageBound: a message over the bus's bound is refused, not
// truncated.
func TestMessageBound(t *testing.T) {
	m := egressMessage("a", store.EgressDecision{ID: "d", Reason: strings.Repeat("x", MaxMessage)})
	if _, err := m.encode(); err == nil {
		t.Fatal("a message over MaxMessage was encoded")
	}
}

// TestDrain: Drain ends the streams and every stream opened after it,
// as a server shutting down needs.
func TestDrain(t *testing.T) {
	h := New(Config{Replica: "a"})
	defer h.Close()
	s := h.Open("")
	h.Drain()
	<-s.Ended()
	<-h.Open("").Ended()
}

// TestEgressThrottle: a runtime's egress decisions are fanned out at
// most EgressPerSecond a second (as many in a burst); the others are
// counted and the runtime's next decision let through says how many.
// Another runtime's are not held back, and an idle runtime is forgotten.
func TestEgressThrottle(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	h := New(Config{Replica: "a", EgressPerSecond: 2, Now: func() time.Time { return now }})
	defer h.Close()
	s := h.Open("")
	for i := range 5 {
		h.Egress(store.EgressDecision{ID: fmt.Sprint("flood", i), RuntimeID: "r1"})
	}
	h.Egress(store.EgressDecision{ID: "other", RuntimeID: "r2"})
	for _, want := range []string{"flood0", "flood1", "other"} {
		if e := take(t, s); e.Egress == nil || e.Egress.ID != want || e.Suppressed != 0 {
			t.Fatalf("fanned out %+v, want %s", e, want)
		}
	}
	select {
	case e := <-s.Events():
		t.Fatalf("fanned out over the bound: %+v", e.Egress)
	default:
	}
	now = now.Add(time.Second)
	h.Egress(store.EgressDecision{ID: "later", RuntimeID: "r1"})
	if e := take(t, s); e.Egress == nil || e.Egress.ID != "later" || e.Suppressed != 3 {
		t.Fatalf("the decision after the flood: %+v suppressed %d, want 3", e.Egress, e.Suppressed)
	}
	now = now.Add(2 * idleBucket)
	h.Egress(store.EgressDecision{ID: "new", RuntimeID: "r3"})
	if n := len(h.egress.m); n != 1 {
		t.Errorf("%d runtimes remembered after the others were idle, want 1", n)
	}
}

// TestLostMessagesEndStreams: a message a replica could not send (its
// Bus queue full) leaves a gap in its numbers, and the replica that
// hears the next one ends its streams, whose clients read the lists
// again, instead of letting them go stale; without a gap they go on.
func TestLostMessagesEndStreams(t *testing.T) {
	bus, err := postgres.Open(t.Context(), testenv.Postgres(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bus.Close() })
	// a is not started: what it posts waits in its queue, which the test
	// hands to b.
	a := New(Config{Replica: "a", Bus: bus, EgressPerSecond: -1})
	defer a.Close()
	b := New(Config{Replica: "b", Rows: bus, Buffer: 2 * outBuffer})
	defer b.Close()
	s := b.Open("")
	for i := range outBuffer + 1 {
		a.Egress(store.EgressDecision{ID: fmt.Sprint("d", i), RuntimeID: fmt.Sprint("r", i)})
	}
	for range outBuffer {
		b.received(<-a.out)
	}
	select {
	case <-s.Ended():
		t.Fatal("a stream ended though nothing was lost")
	default:
	}
	a.Egress(store.EgressDecision{ID: "after", RuntimeID: "r"})
	b.received(<-a.out)
	select {
	case <-s.Ended():
	default:
		t.Fatal("a stream goes on after a message was lost")
	}
	s = b.Open("")
	defer s.Close()
	a.Egress(store.EgressDecision{ID: "next", RuntimeID: "r"})
	b.received(<-a.out)
	if e := take(t, s); e.Egress == nil || e.Egress.ID != "next" {
		t.Fatalf("after the gap, heard %+v", e)
	}
}

// TestStreamsByOrg: a stream opened for an org is offered that org's
// events only; one opened for every org, all of them.
func TestStreamsByOrg(t *testing.T) {
	h := New(Config{Replica: "a"})
	defer h.Close()
	all, o1 := h.Open(""), h.Open("o1")
	defer o1.Close()
	h.Runtime(runtime.Event{Kind: runtime.EventCreated, Runtime: store.Runtime{ID: "r2", OrgID: "o2"}})
	h.Egress(store.EgressDecision{ID: "d2", OrgID: "o2", RuntimeID: "r2"})
	h.Provision(runtime.Provision{ID: "p2", OrgID: "o2"})
	h.Egress(store.EgressDecision{ID: "d1", OrgID: "o1", RuntimeID: "r1"})
	for range 3 {
		if e := take(t, all); e.org() != "o2" {
			t.Fatalf("the stream of every org heard %+v first", e)
		}
	}
	if e := take(t, all); e.Egress == nil || e.Egress.ID != "d1" {
		t.Fatalf("the stream of every org heard %+v", e)
	}
	if e := take(t, o1); e.Egress == nil || e.Egress.ID != "d1" || e.Seq != 4 {
		t.Fatalf("o1's stream heard %+v", e)
	}
	select {
	case e := <-o1.Events():
		t.Fatalf("o1's stream heard besides %+v", e)
	default:
	}
	all.Close()
	h.Egress(store.EgressDecision{ID: "d1b", OrgID: "o1", RuntimeID: "r1"})
	take(t, o1)
}
