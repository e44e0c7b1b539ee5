package shim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// DefaultTerminalGrace is how long a terminal whose call broke waits to be
// re-attached before it is killed.
const DefaultTerminalGrace = 60 * time.Second

var (
	// errTakenOver ends a terminal call whose terminal another call
	// re-attached.
	errTakenOver = errPrecondition("terminal_attached_elsewhere", "", "another session re-attached this terminal")
)

// terminals keeps the agent's terminals by id, through the calls that
// follow them: a terminal is attached to at most one call; when that call
// breaks it waits, detached, for another to re-attach it within the grace.
type terminals struct {
	m     *manager
	clock Clock
	grace time.Duration

	mu   sync.Mutex
	byID map[string]*terminal
	// starting counts the terminals of each scope being started: reserved,
	// not yet added.
	starting map[string]int
}

// terminal is one terminal process and the call attached to it.
type terminal struct {
	id    string
	scope string // TerminalStart.scope
	p     *process
	// gen counts the calls that attached it; a call that ends acts only
	// while it is the latest.
	gen uint64
	// end ends the attached call; nil while detached.
	end context.CancelCauseFunc
	// timer kills the terminal at the end of the grace; nil while attached.
	timer Timer
}

func newTerminals(m *manager, clock Clock, grace time.Duration) *terminals {
	return &terminals{m: m, clock: clock, grace: grace, byID: make(map[string]*terminal), starting: make(map[string]int)}
}

// reserve takes a place for a new terminal of scope when fewer than most
// (0: no bound) of its terminals are kept, attached or detached, or being
// started; add takes the place over, unreserve gives it back. A terminal
// holds its place until it is forgotten: a re-attach takes no other.
func (ts *terminals) reserve(scope string, most int) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if most > 0 {
		n := ts.starting[scope]
		for _, t := range ts.byID {
			if t.scope == scope {
				n++
			}
		}
		if n >= most {
			return &rpcError{kind: kindResourceExhausted, reason: "too_many_terminals",
				msg: fmt.Sprintf("%d terminals are open or waiting to be re-attached, the most allowed; close one first", n)}
		}
	}
	ts.starting[scope]++
	return nil
}

// unreserve gives back a place reserve took.
func (ts *terminals) unreserve(scope string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.unreserveLocked(scope)
}

func (ts *terminals) unreserveLocked(scope string) {
	if ts.starting[scope]--; ts.starting[scope] <= 0 {
		delete(ts.starting, scope)
	}
}

// add registers a new terminal process in the place reserve took for it,
// detached until its call attaches.
func (ts *terminals) add(p *process, scope string) *terminal {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	t := &terminal{id: "t-" + hex.EncodeToString(b), scope: scope, p: p}
	ts.mu.Lock()
	ts.byID[t.id] = t
	ts.unreserveLocked(scope)
	ts.mu.Unlock()
	return t
}

// get returns the terminal with the given id and scope.
func (ts *terminals) get(id, scope string) (*terminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.byID[id]
	if !ok || t.scope != scope {
		return nil, errNotFound("terminal_not_found", id, "no terminal %q: it ended, or it was never this agent's", id)
	}
	return t, nil
}

// attach makes the call that end ends the terminal's one follower, from
// offset off of its output. A call already attached is ended (with
// errTakenOver) first. It returns the call's generation and the offset its
// output starts at: off, or the oldest byte kept when older ones are gone.
func (ts *terminals) attach(t *terminal, off int64, end context.CancelCauseFunc) (uint64, int64, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.byID[t.id] != t {
		return 0, 0, errNotFound("terminal_not_found", t.id, "no terminal %q: it ended", t.id)
	}
	p := t.p
	p.mu.Lock()
	out := p.out[stdoutIdx]
	if off < 0 || off > out.end {
		n := out.end
		p.mu.Unlock()
		return 0, 0, errInvalid("invalid_offset", "offset %d is not in the terminal's output (0 to %d)", off, n)
	}
	p.mu.Unlock()
	if t.end != nil {
		// Cancelled before the pins move: the old follower checks its
		// context under p.mu before it moves them (see follow).
		t.end(errTakenOver)
	}
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	t.gen++
	t.end = end
	p.mu.Lock()
	off = max(off, out.start)
	p.pins[stdoutIdx] = off
	p.broadcastLocked()
	p.mu.Unlock()
	return t.gen, off, nil
}

// left is called when the call of generation gen ends; finished says the
// terminal is over (its exit was sent, or the call's client closed it).
// An earlier call's end changes nothing; otherwise a finished terminal is
// forgotten and a live one waits for the grace.
func (ts *terminals) left(t *terminal, gen uint64, finished bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t.gen != gen || ts.byID[t.id] != t {
		return
	}
	t.end = nil
	if finished {
		ts.forgetLocked(t)
		return
	}
	t.timer = ts.clock.AfterFunc(ts.grace, func() { ts.expire(t, gen) })
}

// expire ends a terminal nobody re-attached within the grace.
func (ts *terminals) expire(t *terminal, gen uint64) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t.gen != gen || t.end != nil || ts.byID[t.id] != t {
		return
	}
	ts.m.log.Debug("terminal not re-attached within its grace", "id", t.id, "process", t.p.id)
	ts.forgetLocked(t)
}

// forgetLocked removes t and releases its process (killing it if it still
// runs). ts.mu is held.
func (ts *terminals) forgetLocked(t *terminal) {
	delete(ts.byID, t.id)
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	ts.m.release(t.p)
}

// close stops every grace timer (the manager kills the processes).
func (ts *terminals) close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.byID {
		if t.timer != nil {
			t.timer.Stop()
		}
	}
	clear(ts.byID)
	clear(ts.starting)
}
