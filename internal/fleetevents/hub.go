// Package fleetevents is the fleet's live events, as one server hears
// them: runtime transitions (the runtime service's subscribers), the
// egress proxy's decisions and provisioning operations, fanned out to the
// streams open on this server (GET /api/v1/events). On a store that
// replicas share (PostgreSQL), what happens on one replica reaches the
// streams of every other through a Bus (LISTEN/NOTIFY), which carries ids
// and each receiving replica reads the rows. The hub decides nothing
// about who may see an event: every stream asks the access service.
package fleetevents

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// Event is one event of the fleet: exactly one of Runtime, Egress and
// Provision is set.
type Event struct {
	// Seq numbers the events this hub fanned out, from 1: a stream's
	// event ids.
	Seq       uint64
	Runtime   *runtime.Event
	Egress    *store.EgressDecision
	Provision *runtime.Provision
}

// Bus carries events between the replicas of one store. A message is at
// most MaxMessage bytes.
type Bus interface {
	// Notify sends payload to every replica listening, this one
	// included.
	Notify(ctx context.Context, payload string) error
	// Listen calls listening once it listens, then fn with every payload
	// sent, until ctx ends (nil) or the connection fails (its error).
	Listen(ctx context.Context, listening func(), fn func(payload string)) error
}

// MaxMessage bounds a message on the Bus (PostgreSQL's NOTIFY takes
// fewer than 8000 bytes).
const MaxMessage = 7900

// Rows are the rows a replica reads for an event another replica sent.
type Rows interface {
	GetRuntime(ctx context.Context, id string) (store.Runtime, error)
	GetSandbox(ctx context.Context, id string) (store.Sandbox, error)
}

// Config configures a Hub.
type Config struct {
	// Replica is this server's id among its store's replicas.
	Replica string
	// Bus carries events to and from the other replicas; nil keeps them
	// in this process (SQLite: one server).
	Bus  Bus
	Rows Rows
	// Buffer is how many events a stream may fall behind before it is
	// ended; 0 means DefaultBuffer.
	Buffer int
	Logger *slog.Logger
}

// DefaultBuffer is how many events a stream may fall behind by default.
const DefaultBuffer = 1024

// outBuffer is how many messages may wait to be sent on the Bus.
const outBuffer = 4096

// Hub fans the fleet's events out to the streams open on this server.
type Hub struct {
	cfg Config

	mu      sync.Mutex
	seq     uint64
	streams map[*Stream]struct{}
	closed  bool

	out     chan string
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	sub     *runtime.Subscription
	unwatch func()
}

// New returns a hub; Start sets it going.
func New(cfg Config) *Hub {
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Hub{cfg: cfg, streams: map[*Stream]struct{}{}, out: make(chan string, outBuffer)}
}

// Start follows rs's transitions and provisions (nil: none, for a test
// of the hub alone) and, with a Bus, sends this replica's events to the
// others and listens for theirs. It returns once the hub listens (or its
// first attempt failed: it goes on trying), so a stream opened after
// Start hears every replica.
func (h *Hub) Start(ctx context.Context, rs *runtime.Service) {
	if rs != nil {
		h.sub = rs.Subscribe("events", h.Runtime)
		h.unwatch = rs.WatchProvisions(h.Provision)
	}
	if h.cfg.Bus == nil {
		return
	}
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.cancel = cancel
	first := make(chan struct{})
	h.wg.Add(2)
	go func() { defer h.wg.Done(); h.send(run) }()
	go func() { defer h.wg.Done(); h.listen(run, first) }()
	select {
	case <-first:
	case <-ctx.Done():
	}
}

// Drain ends every stream and refuses new ones (a stream opened from now
// on is ended at once), while the hub goes on following: a server that
// shuts down drains its requests, and streams never end by themselves.
// Their clients reconnect, to another replica.
func (h *Hub) Drain() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.endAll()
}

// Close stops following and listening and ends every stream.
func (h *Hub) Close() {
	if h.sub != nil {
		h.sub.Unsubscribe()
	}
	if h.unwatch != nil {
		h.unwatch()
	}
	if h.cancel != nil {
		h.cancel()
	}
	h.wg.Wait()
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.endAll()
}

// Runtime fans a transition of this replica out and sends it to the
// others.
func (h *Hub) Runtime(e runtime.Event) {
	h.fanOut(Event{Runtime: &e})
	if h.cfg.Bus != nil {
		h.post(runtimeMessage(h.cfg.Replica, e))
	}
}

// Egress fans a decision of this replica's egress proxy out and sends it
// to the others. It never blocks: the proxy calls it on its requests'
// path.
func (h *Hub) Egress(d store.EgressDecision) {
	h.fanOut(Event{Egress: &d})
	if h.cfg.Bus != nil {
		h.post(egressMessage(h.cfg.Replica, d))
	}
}

// Provision fans a provisioning operation's progress out. Provisions are
// each replica's own (GET /api/provisions lists this replica's), so they
// stay in this process.
func (h *Hub) Provision(p runtime.Provision) {
	h.fanOut(Event{Provision: &p})
}

// post queues a message for the Bus, dropping it (logged) when the queue
// is full rather than making a caller wait.
func (h *Hub) post(m message) {
	payload, err := m.encode()
	if err != nil {
		h.cfg.Logger.Warn("an event is not sent to the other replicas", "err", err)
		return
	}
	select {
	case h.out <- payload:
	default:
		h.cfg.Logger.Warn("an event is not sent to the other replicas: the queue is full")
	}
}

// send sends the queued messages on the Bus until ctx ends.
func (h *Hub) send(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-h.out:
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if err := h.cfg.Bus.Notify(sctx, p); err != nil && ctx.Err() == nil {
				h.cfg.Logger.Warn("sending an event to the other replicas", "err", err)
			}
			cancel()
		}
	}
}

// listen hears the other replicas until ctx ends, listening again after
// a failure. What was sent while it did not listen is lost, so a failure
// ends the streams open here: their clients reconnect and read the lists
// again. first is closed after the first attempt.
func (h *Hub) listen(ctx context.Context, first chan struct{}) {
	var firstOnce sync.Once
	done := func() { firstOnce.Do(func() { close(first) }) }
	defer done()
	wait := 100 * time.Millisecond
	for {
		heard := false
		err := h.cfg.Bus.Listen(ctx, func() {
			heard = true
			done()
		}, h.received)
		done()
		if ctx.Err() != nil {
			return
		}
		h.cfg.Logger.Warn("listening for the other replicas' events failed; streams end and it listens again", "err", err)
		h.endAll()
		if heard {
			wait = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Second)
	}
}

// received fans out what another replica sent.
func (h *Hub) received(payload string) {
	m, err := decode(payload)
	if err != nil {
		h.cfg.Logger.Warn("an event from another replica does not decode", "err", err)
		return
	}
	if m.Replica == h.cfg.Replica {
		return // fanned out when it happened
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, ok, err := m.event(ctx, h.cfg.Rows)
	if err != nil {
		h.cfg.Logger.Warn("reading the rows of another replica's event", "err", err)
		return
	}
	if ok {
		h.fanOut(e)
	}
}
