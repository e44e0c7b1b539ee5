package fleetevents

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
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
	slow, fast := h.Open(), h.Open()
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
	<-h.Open().Ended()
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
	s := h.Open()
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
	s := h.Open()
	h.Drain()
	<-s.Ended()
	<-h.Open().Ended()
}
