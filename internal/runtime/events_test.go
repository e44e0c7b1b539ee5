package runtime

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

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
		r.s.Subscribe("test", a.add)
		r.s.Subscribe("test", b.add)
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
		sub := r.s.Subscribe("test", gone.add)
		r.s.Subscribe("test", stays.add)
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
		late := r.s.Subscribe("test", gone.add) // after Close: a subscription that hears nothing
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
		r.s.Subscribe("test", func(e Event) {
			<-release
			blocked.add(e)
		})
		r.s.Subscribe("test", other.add)
		r.s.Subscribe("test", func(e Event) {
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
		sub := r.s.Subscribe("test", func(e Event) {
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
		r.s.Subscribe("test", h.add)
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
			EventStarting, EventFailed, // a failed start; the reset from error kills nothing
			EventStarting, EventRunning, EventKilled, // start, kill the sandbox
			EventDeleted) // delete the project, which has no sandbox left
		h.mu.Lock()
		defer h.mu.Unlock()
		reasons := map[EventKind][]string{}
		for _, e := range h.es {
			reasons[e.Kind] = append(reasons[e.Kind], e.Reason)
		}
		if !slices.Equal(reasons[EventKilled], []string{KillReset, KillDeleted}) {
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
		r.s.Subscribe("test", h.add)
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

// TestCloseAgentsKeepsEvents: CloseAgents ends the agent connections (an
// Agent call answers shutting_down) and nothing else: a transition after
// it still reaches the subscribers. Close then ends the subscriptions.
func TestCloseAgentsKeepsEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		noDial := func(context.Context, string) (net.Conn, error) { return nil, errors.New("no agent in this test") }
		r := newRig(t, fake.Config{Agent: noDial}, Defaults{})
		var h heard
		sub := r.s.Subscribe("test", h.add)
		rt := r.started("p", ConfigRequest{})
		if _, _, err := r.s.Agent(r.ctx, rt.ID); err != nil {
			t.Fatalf("Agent before CloseAgents: %v", err)
		}
		r.s.CloseAgents()
		if _, _, err := r.s.Agent(r.ctx, rt.ID); !errors.Is(err, errdefs.ErrUnavailable) {
			t.Fatalf("Agent after CloseAgents: %v, want shutting_down", err)
		}
		_, err := r.s.Pause(r.ctx, rt.ID, store.PauseUser)
		r.must(err)
		synctest.Wait()
		wantKinds(t, "after CloseAgents", h.kinds(rt.ID), EventCreated, EventStarting, EventRunning, EventPaused)

		r.must(r.s.Close())
		_, err = r.s.Resume(r.ctx, rt.ID)
		r.must(err)
		synctest.Wait()
		wantKinds(t, "after Close", h.kinds(rt.ID), EventCreated, EventStarting, EventRunning, EventPaused)
		sub.mu.Lock()
		ended := sub.ended
		sub.mu.Unlock()
		if !ended {
			t.Fatal("Close left the subscription open")
		}
	})
}

// logLines is a log sink whose lines a test counts.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// count is how many lines hold s.
func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// TestSlowSubscriberWarnsAtHighWater: a subscriber whose queue grows past
// the mark is named in one warning per crossing, and loses no event.
func TestSlowSubscriberWarnsAtHighWater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logLines
		r := newRigWith(t, rigOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		var (
			mu      sync.Mutex
			gate    = make(chan struct{})
			handled int
		)
		release := func() { // lets fn return, now and whenever it is told to wait again
			mu.Lock()
			defer mu.Unlock()
			select {
			case <-gate:
			default:
				close(gate)
			}
		}
		t.Cleanup(release) // before the rig's Close waits for fn
		r.s.Subscribe("slowpoke", func(Event) {
			mu.Lock()
			g := gate
			mu.Unlock()
			<-g
			mu.Lock()
			handled++
			mu.Unlock()
		})
		var fast heard
		r.s.Subscribe("fast", fast.add)
		publish := func(n int) {
			for i := range n {
				r.s.publish(Event{Kind: EventCreated})
				if i%256 == 255 {
					synctest.Wait() // the fast one keeps up
				}
			}
		}
		warning := `subscriber=slowpoke`
		warnings := func(what string, want int) {
			t.Helper()
			synctest.Wait()
			if got := logs.count(warning); got != want {
				t.Fatalf("%s: %d warnings naming the subscriber, want %d", what, got, want)
			}
		}

		publish(1) // taken by fn, which blocks on it
		synctest.Wait()
		publish(queueHighWater) // queued: at the mark
		warnings("at the mark", 0)
		publish(1)
		warnings("past the mark", 1)
		publish(queueHighWater)
		warnings("further past it", 1)

		release() // it catches up, and is blocked again
		synctest.Wait()
		mu.Lock()
		gate = make(chan struct{})
		mu.Unlock()
		publish(1)
		synctest.Wait()
		publish(queueHighWater + 1)
		warnings("past the mark again", 2)
		release()
		synctest.Wait()
		const total = 3*queueHighWater + 4
		mu.Lock()
		defer mu.Unlock()
		if handled != total {
			t.Fatalf("the slow subscriber handled %d events, want %d", handled, total)
		}
		if n := len(fast.kinds("")); n != total || logs.count("subscriber=fast") != 0 {
			t.Fatalf("the fast subscriber heard %d events, want %d, and was warned of %d times", n, total, logs.count("subscriber=fast"))
		}
	})
}

// TestResetAfterFailedStartKillsOnce: a failed start's row is killed
// (provision_failed) and told of as failed; resetting the runtime from
// error kills no row, so it is not told of as killed a second time. A
// project deleted with a running sandbox is told of its kill.
func TestResetAfterFailedStartKillsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{})
		var h heard
		r.s.Subscribe("test", h.add)
		rt := r.project("p", ConfigRequest{})
		r.fake.FailNext(fake.OpCreate, errdefs.Unavailable("backend_down", "down"))
		if _, err := r.s.Start(r.ctx, rt.ID, nil); err == nil {
			t.Fatal("a start whose create failed succeeded")
		}
		rt, err := r.s.Reset(r.ctx, rt.ID, false)
		r.must(err)
		if rt.Status != store.RuntimeIdle {
			t.Fatalf("reset left the runtime %s", rt.Status)
		}
		synctest.Wait()
		wantKinds(t, "failed start, reset", h.kinds(rt.ID), EventCreated, EventStarting, EventFailed)

		rt, err = r.s.Start(r.ctx, rt.ID, nil)
		r.must(err)
		p, err := r.st.GetProject(r.ctx, rt.ProjectID)
		r.must(err)
		r.must(r.s.DeleteProject(r.ctx, p))
		synctest.Wait()
		wantKinds(t, "start, delete", h.kinds(rt.ID), EventCreated, EventStarting, EventFailed,
			EventStarting, EventRunning, EventKilled, EventDeleted)
		if e := h.es[len(h.es)-2]; e.Reason != KillProjectDeleted || e.Sandbox.ID != rt.CurrentSandboxID || e.Sandbox.State != store.SandboxKilled {
			t.Fatalf("the delete's kill: %+v", e)
		}
	})
}

// TestReconcilePublishes: a runtime whose status disagrees with its row is
// brought to the row's, and says so (a running that is no start, a
// paused); compute that stopped by itself is told of as killed (exited).
func TestReconcilePublishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{})
		var h heard
		r.s.Subscribe("test", h.add)
		rt := r.started("p", ConfigRequest{})
		setStatus := func(status store.RuntimeStatus) {
			t.Helper()
			cur, _ := r.get(rt.ID)
			to := cur.State()
			to.Status = status
			_, err := r.st.SetRuntimeState(r.ctx, cur.ID, cur.Version, to, time.Time{})
			r.must(err)
		}
		reconcile := func(want Reconciliation) {
			t.Helper()
			got, err := r.s.Reconcile(r.ctx, rt.ID)
			r.must(err)
			if got != want {
				t.Fatalf("reconciled %q, want %q", got, want)
			}
		}

		setStatus(store.RuntimePaused) // the row says running
		reconcile(ReconcileNone)
		synctest.Wait()
		wantKinds(t, "runtime said paused", h.kinds(rt.ID), EventCreated, EventStarting, EventRunning, EventRunning)
		if e := h.last(); e.Fresh || e.Runtime.Status != store.RuntimeRunning || e.Sandbox.ID != rt.CurrentSandboxID {
			t.Fatalf("the synced running event: %+v", e)
		}

		_, err := r.s.Pause(r.ctx, rt.ID, store.PauseUser)
		r.must(err)
		setStatus(store.RuntimeRunning) // the row says paused
		reconcile(ReconcileNone)
		synctest.Wait()
		if e := h.last(); e.Kind != EventPaused || e.Runtime.Status != store.RuntimePaused || e.Sandbox.State != store.SandboxPaused {
			t.Fatalf("the synced paused event: %+v", e)
		}

		rt, err = r.s.Resume(r.ctx, rt.ID)
		r.must(err)
		_, sb := r.get(rt.ID)
		if !r.fake.Kill(sb.ProviderSandboxID, 1) {
			t.Fatal("the fake did not stop the compute")
		}
		reconcile(ReconcileExited)
		synctest.Wait()
		wantKinds(t, "the walk", h.kinds(rt.ID), EventCreated, EventStarting, EventRunning, EventRunning,
			EventPaused, EventPaused, EventRunning, EventKilled)
		if e := h.last(); e.Reason != KillExited || e.Runtime.Status != store.RuntimeError || e.Sandbox.ID != sb.ID {
			t.Fatalf("the exited event: %+v", e)
		}
	})
}

// TestWakePublishes: an operation on a paused runtime (AgentOf) resumes it
// and tells of a running that is not fresh; on an archived one it restores
// it, a fresh start.
func TestWakePublishes(t *testing.T) {
	noDial := func(context.Context, string) (net.Conn, error) { return nil, errors.New("no agent in this test") }
	for _, c := range []struct {
		name  string
		cfg   fake.Config
		pause EventKind
		wake  []EventKind
		fresh bool
	}{
		{"paused", fake.Config{Agent: noDial}, EventPaused, []EventKind{EventRunning}, false},
		{"archived", fake.Config{Agent: noDial, NoPause: true}, EventArchived, []EventKind{EventStarting, EventRunning}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, c.cfg, Defaults{})
				var h heard
				r.s.Subscribe("test", h.add)
				rt := r.started("p", ConfigRequest{})
				rt, err := r.s.Pause(r.ctx, rt.ID, store.PauseUser)
				r.must(err)
				_, woken, err := r.s.AgentOf(r.ctx, rt)
				r.must(err)
				if woken.Status != store.RuntimeRunning {
					t.Fatalf("the operation left the runtime %s", woken.Status)
				}
				synctest.Wait()
				want := append([]EventKind{EventCreated, EventStarting, EventRunning, c.pause}, c.wake...)
				wantKinds(t, "pause, wake", h.kinds(rt.ID), want...)
				if e := h.last(); e.Fresh != c.fresh || e.Sandbox.ID != woken.CurrentSandboxID || e.Sandbox.State != store.SandboxRunning {
					t.Fatalf("the wake's running event: %+v, want fresh %v", e, c.fresh)
				}
			})
		})
	}
}

// TestExpiryAndArchivePublish: a runtime past its idle window is paused
// with reason timeout (archived on a provider that cannot pause), and one
// paused past its archive_after is archived; each says so.
func TestExpiryAndArchivePublish(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  fake.Config
		want EventKind
	}{{"pauses", fake.Config{}, EventPaused}, {"cannot pause", fake.Config{NoPause: true}, EventArchived}} {
		t.Run("expiry "+c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, c.cfg, Defaults{})
				var h heard
				r.s.Subscribe("test", h.add)
				rt := r.started("p", ConfigRequest{IdleTimeoutSeconds: 60})
				time.Sleep(61 * time.Second)
				paused, err := r.s.PauseIfExpired(r.ctx, rt.ID, time.Now())
				r.must(err)
				if !paused {
					t.Fatal("not paused past its window")
				}
				synctest.Wait()
				wantKinds(t, "start, expiry", h.kinds(rt.ID), EventCreated, EventStarting, EventRunning, c.want)
				e := h.last()
				if c.want == EventPaused && (e.Sandbox.PauseReason != store.PauseTimeout || e.Runtime.Status != store.RuntimePaused) {
					t.Fatalf("the expiry's paused event: %+v", e)
				}
				if c.want == EventArchived && (e.Runtime.Status != store.RuntimeArchived || e.Sandbox.KillReason != KillArchived) {
					t.Fatalf("the expiry's archived event: %+v", e)
				}
			})
		})
	}
	t.Run("archive after paused", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newRig(t, fake.Config{}, Defaults{})
			var h heard
			r.s.Subscribe("test", h.add)
			rt := r.started("p", ConfigRequest{ArchiveAfterSeconds: 3600})
			_, err := r.s.Pause(r.ctx, rt.ID, store.PauseUser)
			r.must(err)
			time.Sleep(time.Hour)
			archived, err := r.s.ArchiveIfDue(r.ctx, rt.ID, time.Now())
			r.must(err)
			if !archived {
				t.Fatal("not archived past archive_after")
			}
			synctest.Wait()
			wantKinds(t, "pause, archive", h.kinds(rt.ID), EventCreated, EventStarting, EventRunning, EventPaused, EventArchived)
			if e := h.last(); e.Runtime.Status != store.RuntimeArchived || e.Runtime.Snapshot == "" ||
				e.Sandbox.ID != rt.CurrentSandboxID || e.Sandbox.KillReason != KillArchived {
				t.Fatalf("the archived event: %+v", e)
			}
		})
	})
}

// TestUpdatesPublish: what moves no status but changes what a runtime
// shows publishes updated: a keepalive that moves the expiry (one that
// does not, nothing), and a configuration change (a patch that changes
// nothing, nothing).
func TestUpdatesPublish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{})
		var h heard
		r.s.Subscribe("test", h.add)
		rt := r.started("p", ConfigRequest{})
		_, err := r.s.Keepalive(r.ctx, rt.ID, 0) // the window it has already
		r.must(err)
		_, err = r.s.Keepalive(r.ctx, rt.ID, 2*time.Hour)
		r.must(err)
		idle := int64(1234)
		_, _, err = r.s.Configure(r.ctx, rt.ID, Patch{IdleTimeoutSeconds: &idle})
		r.must(err)
		_, _, err = r.s.Configure(r.ctx, rt.ID, Patch{IdleTimeoutSeconds: &idle})
		r.must(err)
		synctest.Wait()
		wantKinds(t, "keepalives and patches", h.kinds(rt.ID), EventCreated, EventStarting, EventRunning, EventUpdated, EventUpdated)
		h.mu.Lock()
		defer h.mu.Unlock()
		last := h.es[len(h.es)-1]
		if last.Runtime.Config.IdleTimeoutSeconds != idle || last.Sandbox.ID != last.Runtime.CurrentSandboxID || last.Sandbox.ExpiresAt.IsZero() {
			t.Errorf("the configuration's update carries %+v, sandbox %s expiring %v", last.Runtime.Config, last.Sandbox.ID, last.Sandbox.ExpiresAt)
		}
	})
}
