package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// EventKind names a runtime transition: the status it moved the runtime
// to (see the state machine in the package comment), or its creation and
// deletion.
type EventKind string

// The transitions a runtime makes.
const (
	// EventCreated: a project was created with its runtime, idle.
	EventCreated EventKind = "created"
	// EventStarting: a start (or a restore of an archived runtime)
	// recorded its sandbox row and is provisioning it.
	EventStarting EventKind = "starting"
	// EventRunning: a sandbox began to run. Fresh says it is a new one
	// (a start, a restore, a warm claim); otherwise a paused one was
	// resumed (resume, wake, reconciliation).
	EventRunning EventKind = "running"
	// EventPaused: the sandbox was paused; its PauseReason says why
	// (user, timeout for an expiry, insufficient_credits, …).
	EventPaused EventKind = "paused"
	// EventArchived: the sandbox was saved and released (a pause or an
	// expiry on a provider that cannot pause, or a pause past
	// archive_after); the runtime has no sandbox.
	EventArchived EventKind = "archived"
	// EventFailed: a start failed; the runtime is in error with the
	// reason and the row killed as provision_failed.
	EventFailed EventKind = "failed"
	// EventKilled: the runtime's sandbox was killed with Reason (reset,
	// deleted, vanished, exited, interrupted, …) and the runtime left
	// without one, idle or in error. It is told of once, by the action
	// that killed the row: releasing a runtime whose sandbox ended before
	// (a reset from error or from archived, a delete after a kill) publishes
	// nothing more.
	EventKilled EventKind = "killed"
	// EventDeleted: the runtime was deleted with its project.
	EventDeleted EventKind = "deleted"
	// EventUpdated: the runtime moved no status, but what a table of
	// runtimes shows of it changed: its configuration (Configure), or
	// its sandbox's expiry (a keepalive).
	EventUpdated EventKind = "updated"
)

// Event is one transition of a runtime, as the runtime service recorded it.
// Runtime and Sandbox are the rows as written (Sandbox is zero when the
// runtime has none); a subscriber reads them and must not change them.
type Event struct {
	Kind    EventKind
	Runtime store.Runtime
	Sandbox store.Sandbox
	// Fresh: for EventRunning, the sandbox is new rather than resumed.
	Fresh bool
	// Reason: for EventKilled, the row's kill reason.
	Reason string
	At     time.Time
}

// Subscribe has fn told of every runtime transition from now on, until
// the subscription ends. name says who subscribes, in the logs.
//
// Delivery: each subscription has a queue of its own and a goroutine that
// calls fn with one event at a time, in the order the transitions were
// recorded. Publishing only appends to the queues, so the runtime service
// never waits for a subscriber while it holds a runtime's lock, and a slow
// subscriber delays nobody but itself. A panic in fn is logged and
// delivery goes on with the next event. The queue is not bounded, and no
// event is ever dropped: fn must keep up on average (hand long work to a
// goroutine of its own). A queue that grows past queueHighWater (1024)
// events is logged as a warning, once each time it crosses the mark. A
// subscriber that must have heard of a transition before it acts (the
// bindings of a sandbox that just started, before a prompt) calls Sync.
// After Close, Subscribe returns a subscription that hears nothing.
func (s *Service) Subscribe(name string, fn func(Event)) *Subscription {
	sub := &Subscription{list: &s.subs, name: name, fn: fn, logger: s.logger,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), progress: make(chan struct{})}
	s.subs.mu.Lock()
	if s.subs.closed {
		s.subs.mu.Unlock()
		sub.ended = true
		sub.once.Do(func() { close(sub.stop) })
		close(sub.done)
		return sub
	}
	s.subs.list = append(s.subs.list, sub)
	s.subs.mu.Unlock()
	go sub.run()
	return sub
}

// publish tells every subscriber of a transition; it never blocks on
// them.
func (s *Service) publish(e Event) {
	if e.At.IsZero() {
		e.At = s.now()
	}
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	for _, sub := range s.subs.list {
		sub.push(e)
	}
}

// queueHighWater is how many events a subscription's queue holds, waiting
// for its subscriber, before a warning says the subscriber is falling
// behind. The queue goes on growing: the mark only warns.
const queueHighWater = 1024

// subscribers are a Service's subscriptions.
type subscribers struct {
	mu     sync.Mutex
	list   []*Subscription
	closed bool
}

// close ends every subscription and refuses new ones.
func (l *subscribers) close() {
	l.mu.Lock()
	list := l.list
	l.list, l.closed = nil, true
	l.mu.Unlock()
	for _, sub := range list {
		sub.end()
	}
}

// Subscription is one subscriber of a Service's events: its queue and the
// goroutine that delivers it.
type Subscription struct {
	list   *subscribers
	name   string
	fn     func(Event)
	logger *slog.Logger

	mu       sync.Mutex
	q        []Event
	pushed   uint64        // events queued, ever
	handled  uint64        // events fn returned from, ever
	ended    bool          // no more deliveries
	behind   bool          // q crossed queueHighWater, and has not fallen back to half of it since
	progress chan struct{} // closed, and replaced, when handled moves or the subscription ends

	wake chan struct{} // holds a token while q may be non-empty
	stop chan struct{} // closed by end
	once sync.Once
	done chan struct{} // closed when run returns
}

// Unsubscribe ends the subscription: what is still queued is dropped, and
// it returns once a call of fn in flight has returned, so fn is not
// called after it. It must not be called from fn; calling it again does
// nothing. Close ends every subscription the same way.
func (sub *Subscription) Unsubscribe() {
	l := sub.list
	l.mu.Lock()
	for i, x := range l.list {
		if x == sub {
			l.list = append(l.list[:i:i], l.list[i+1:]...)
			break
		}
	}
	l.mu.Unlock()
	sub.end()
}

// Sync returns once fn has handled every event published before the call
// (or the subscription ended), or when ctx ends.
func (sub *Subscription) Sync(ctx context.Context) error {
	sub.mu.Lock()
	target := sub.pushed
	sub.mu.Unlock()
	for {
		sub.mu.Lock()
		if sub.handled >= target || sub.ended {
			sub.mu.Unlock()
			return nil
		}
		ch := sub.progress
		sub.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (sub *Subscription) push(e Event) {
	sub.mu.Lock()
	sub.q = append(sub.q, e)
	sub.pushed++
	queued := len(sub.q)
	crossed := queued > queueHighWater && !sub.behind
	if crossed {
		sub.behind = true
	}
	sub.mu.Unlock()
	if crossed {
		sub.logger.Warn("a runtime event subscriber is falling behind; its queue goes on growing",
			"subscriber", sub.name, "queued", queued, "high_water", queueHighWater)
	}
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

func (sub *Subscription) end() {
	sub.once.Do(func() { close(sub.stop) })
	<-sub.done
}

// run delivers the queue until end.
func (sub *Subscription) run() {
	defer func() {
		sub.mu.Lock()
		sub.ended, sub.q = true, nil
		close(sub.progress)
		sub.mu.Unlock()
		close(sub.done)
	}()
	for {
		select {
		case <-sub.stop:
			return
		case <-sub.wake:
		}
		for {
			e, ok := sub.next()
			if !ok {
				break
			}
			select {
			case <-sub.stop:
				return
			default:
			}
			sub.deliver(e)
		}
	}
}

// next takes the queue's first event.
func (sub *Subscription) next() (Event, bool) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if len(sub.q) == 0 {
		return Event{}, false
	}
	e := sub.q[0]
	sub.q = sub.q[1:]
	if len(sub.q) == 0 {
		sub.q = nil // let the backing array go
	}
	if len(sub.q) <= queueHighWater/2 {
		sub.behind = false // it caught up: the next crossing warns again
	}
	return e, true
}

// deliver calls fn with e, surviving its panic, and counts it handled.
func (sub *Subscription) deliver(e Event) {
	defer func() {
		if r := recover(); r != nil {
			sub.logger.Error("a runtime event subscriber panicked", "event", string(e.Kind), "runtime", e.Runtime.ID, "panic", fmt.Sprint(r))
		}
		sub.mu.Lock()
		sub.handled++
		close(sub.progress)
		sub.progress = make(chan struct{})
		sub.mu.Unlock()
	}()
	sub.fn(e)
}

// sandboxEvent is the event of a runtime whose sandbox moved to state.
func sandboxEvent(state store.SandboxState) EventKind {
	switch state {
	case store.SandboxRunning:
		return EventRunning
	case store.SandboxPaused:
		return EventPaused
	case store.SandboxKilled:
		return EventKilled
	}
	return EventStarting
}
