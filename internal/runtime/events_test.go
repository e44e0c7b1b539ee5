package runtime

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
)

// heard collects the events a subscriber was told of.
type heard struct {
	mu sync.Mutex
	es []Event
}

func (h *heard) add(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.es = append(h.es, e)
}

// kinds are the kinds heard of runtime id ("" for all), in order.
func (h *heard) kinds(id string) []EventKind {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []EventKind
	for _, e := range h.es {
		if id == "" || e.Runtime.ID == id {
			out = append(out, e.Kind)
		}
	}
	return out
}

func (h *heard) last() Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.es[len(h.es)-1]
}

func wantKinds(t *testing.T, what string, got []EventKind, want ...EventKind) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: heard %v, want %v", what, got, want)
	}
}

// TestTwoSubscribersBothHearRunning: every subscriber is told of a start,
// neither taking the other's place.
func TestTwoSubscribersBothHearRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{})
		var a, b heard
		r.s.Subscribe(a.add)
		r.s.Subscribe(b.add)
		rt := r.started("p", ConfigRequest{})
		synctest.Wait()
		for name, h := range map[string]*heard{"first": &a, "second": &b} {
			wantKinds(t, name, h.kinds(""), EventCreated, EventStarting, EventRunning)
			e := h.last()
			if !e.Fresh || e.Runtime.ID != rt.ID || e.Runtime.Status != store.RuntimeRunning ||
				e.Sandbox.ID != rt.CurrentSandboxID || e.Sandbox.State != store.SandboxRunning || e.Sandbox.ExpiresAt.IsZero() {
				t.Fatalf("%s: running event %+v", name, e)
			}
		}
	})
}

// TestUnsubscribeStopsDelivery: once Unsubscribe returns, its subscriber
// hears nothing more while the others still do; twice is fine, and Close
// ends the rest.
func TestUnsubscribeStopsDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{})
		var gone, stays heard
		sub := r.s.Subscribe(gone.add)
		r.s.Subscribe(stays.add)
		rt := r.project("p", ConfigRequest{})
		synctest.Wait()
		sub.Unsubscribe()
		sub.Unsubscribe()
		_, err := r.s.Start(r.ctx, rt.ID, nil)
		r.must(err)
		synctest.Wait()
		wantKinds(t, "unsubscribed", gone.kinds(""), EventCreated)
		wantKinds(t, "still subscribed", stays.kinds(""), EventCreated, EventStarting, EventRunning)

		r.must(r.s.Close())
		_, err = r.s.Pause(r.ctx, rt.ID, store.PauseUser)
		r.must(err)
		late := r.s.Subscribe(gone.add) // after Close: a subscription that hears nothing
		synctest.Wait()
		wantKinds(t, "after Close", stays.kinds(""), EventCreated, EventStarting, EventRunning)
		late.Unsubscribe()
		r.must(late.Sync(r.ctx))
	})
}

// TestBlockedSubscriberBlocksNothing: a subscriber that does not return
// holds up neither the runtime's actions (which publish with its lock
// held) nor the other subscribers; a panicking one is survived. The
// blocked one then hears everything, in order.
func TestBlockedSubscriberBlocksNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{})
		release := make(chan struct{})
		var blocked, other, panicky heard
		r.s.Subscribe(func(e Event) {
			<-release
			blocked.add(e)
		})
		r.s.Subscribe(other.add)
		r.s.Subscribe(func(e Event) {
			panicky.add(e)
			panic("a subscriber's bug")
		})
		rt := r.started("p", ConfigRequest{})
		_, err := r.s.Pause(r.ctx, rt.ID, store.PauseUser)
		r.must(err)
		_, err = r.s.Resume(r.ctx, rt.ID)
		r.must(err)
		synctest.Wait() // everyone but the blocked one is done
		all := []EventKind{EventCreated, EventStarting, EventRunning, EventPaused, EventRunning}
		wantKinds(t, "beside a blocked subscriber", other.kinds(""), all...)
		wantKinds(t, "a subscriber that panics", panicky.kinds(""), all...)
		wantKinds(t, "blocked", blocked.kinds(""))
		close(release)
		synctest.Wait()
		wantKinds(t, "released", blocked.kinds(""), all...)
	})
}

// TestSyncWaitsForDelivery: Sync returns once the subscriber handled what
// was published before it.
func TestSyncWaitsForDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{})
		release := make(chan struct{})
		var h heard
		sub := r.s.Subscribe(func(e Event) {
			<-release
			h.add(e)
		})
		r.project("p", ConfigRequest{})
		synced := make(chan error, 1)
		go func() { synced <- sub.Sync(r.ctx) }()
		synctest.Wait()
		select {
		case err := <-synced:
			t.Fatalf("Sync returned (%v) before the event was handled", err)
		default:
		}
		close(release)
		r.must(<-synced)
		wantKinds(t, "synced", h.kinds(""), EventCreated)
	})
}

// TestEveryTransitionPublishes walks the state machine and holds each
// transition to the event it publishes.
func TestEveryTransitionPublishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{})
		var h heard
		r.s.Subscribe(h.add)
		rt := r.started("p", ConfigRequest{})
		_, err := r.s.Pause(r.ctx, rt.ID, store.PauseUser)
		r.must(err)
		_, err = r.s.Resume(r.ctx, rt.ID)
		r.must(err)
		_, err = r.s.Keepalive(r.ctx, rt.ID, 0) // not a transition
		r.must(err)
		_, err = r.s.Reset(r.ctx, rt.ID, false)
		r.must(err)
		r.fake.FailNext(fake.OpCreate, errdefs.Unavailable("backend_down", "down"))
		if _, err := r.s.Start(r.ctx, rt.ID, nil); err == nil {
			t.Fatal("a start whose create failed succeeded")
		}
		_, err = r.s.Reset(r.ctx, rt.ID, false)
		r.must(err)
		rt, err = r.s.Start(r.ctx, rt.ID, nil)
		r.must(err)
		_, err = r.s.KillSandbox(r.ctx, rt.CurrentSandboxID)
		r.must(err)
		p, err := r.st.GetProject(r.ctx, rt.ProjectID)
		r.must(err)
		r.must(r.s.DeleteProject(r.ctx, p))
		synctest.Wait()
		wantKinds(t, "the walk", h.kinds(rt.ID),
			EventCreated, EventStarting, EventRunning, // start
			EventPaused, EventRunning, // pause, resume
			EventKilled,                // reset
			EventStarting, EventFailed, // a failed start
			EventKilled,                              // reset from error
			EventStarting, EventRunning, EventKilled, // start, kill the sandbox
			EventKilled, EventDeleted) // delete the project
		h.mu.Lock()
		defer h.mu.Unlock()
		reasons := map[EventKind][]string{}
		for _, e := range h.es {
			reasons[e.Kind] = append(reasons[e.Kind], e.Reason)
		}
		if !slices.Equal(reasons[EventKilled], []string{KillReset, KillReset, KillDeleted, KillProjectDeleted}) {
			t.Errorf("kill reasons %v", reasons[EventKilled])
		}
		if !slices.Equal(reasons[EventFailed], []string{KillProvisionFailed}) {
			t.Errorf("failed reasons %v", reasons[EventFailed])
		}
	})
}

// TestArchivePublishes: a pause on a provider that cannot pause archives,
// and says so.
func TestArchivePublishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{NoPause: true}, Defaults{})
		var h heard
		r.s.Subscribe(h.add)
		rt := r.started("p", ConfigRequest{})
		_, err := r.s.Pause(r.ctx, rt.ID, store.PauseUser)
		r.must(err)
		_, err = r.s.Resume(r.ctx, rt.ID) // restores
		r.must(err)
		synctest.Wait()
		wantKinds(t, "archive and restore", h.kinds(rt.ID),
			EventCreated, EventStarting, EventRunning, EventArchived, EventStarting, EventRunning)
		if e := h.last(); !e.Fresh {
			t.Fatal("a restored sandbox is not fresh")
		}
	})
}
