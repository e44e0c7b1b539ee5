package runtime

import (
	"slices"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Provision is one provisioning operation — a start, a restore from an
// archive, a warm claim — with its steps and how long each took. The
// service keeps those in flight and the most recent finished ones, for
// GET /api/provisions.
type Provision struct {
	ID        string
	RuntimeID string
	SandboxID string
	OrgID     string
	Provider  string
	Kind      string // start | restore
	Warm      bool   // claimed from the warm pool
	State     string // running | succeeded | failed
	StartedAt time.Time
	EndedAt   time.Time
	Error     string
	Steps     []ProvisionStep
}

// ProvisionStep is one step of a provision.
type ProvisionStep struct {
	Name      string // resolve_secrets, reserve, create, record, start, relabel, resume, adopt_link, mark_running
	StartedAt time.Time
	Duration  time.Duration
	Error     string
}

// recentProvisions is how many finished provisions are kept.
const recentProvisions = 100

// provisionLog holds the provisions in flight and the recent ones.
type provisionLog struct {
	mu       sync.Mutex
	inflight map[string]*Provision
	recent   []Provision // oldest first, at most recentProvisions
	// watchers are told of every change of a provision (WatchProvisions).
	watchers  map[int]func(Provision)
	nextWatch int
}

// WatchProvisions has fn told of each provision as it begins, after each
// of its steps and as it ends, until the returned func is called. fn is
// called with the log's lock held: it must not block, nor call back.
func (s *Service) WatchProvisions(fn func(Provision)) (stop func()) {
	l := &s.provisions
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watchers == nil {
		l.watchers = map[int]func(Provision){}
	}
	l.nextWatch++
	n := l.nextWatch
	l.watchers[n] = fn
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.watchers, n)
	}
}

// told tells the watchers of p; the log's lock is held.
func (l *provisionLog) told(p *Provision) {
	for _, fn := range l.watchers {
		c := *p
		c.Steps = slices.Clone(p.Steps)
		fn(c)
	}
}

// tracked is one provision being recorded.
type tracked struct {
	log *provisionLog
	p   *Provision
	now func() time.Time
	// beside counts the steps still running beside the provision's own
	// (besideStep); ended holds its outcome once end was called before
	// they were through. Both guarded by the log's mu.
	beside int
	ended  *error
}

// begin records the start of a provision.
func (l *provisionLog) begin(p Provision, now func() time.Time) *tracked {
	p.ID = newID()
	p.State = "running"
	p.StartedAt = now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight == nil {
		l.inflight = map[string]*Provision{}
	}
	l.inflight[p.ID] = &p
	l.told(&p)
	return &tracked{log: l, p: &p, now: now}
}

// step runs fn as the named step and records how long it took.
func (t *tracked) step(name string, fn func() error) error {
	t0 := t.now()
	err := fn()
	st := ProvisionStep{Name: name, StartedAt: t0, Duration: t.now().Sub(t0)}
	if err != nil {
		st.Error = publicText(err)
	}
	t.log.mu.Lock()
	t.p.Steps = append(t.p.Steps, st)
	t.log.told(t.p)
	t.log.mu.Unlock()
	return err
}

// set updates the provision's fields under the log's lock.
func (t *tracked) set(fn func(p *Provision)) {
	t.log.mu.Lock()
	defer t.log.mu.Unlock()
	fn(t.p)
}

// end records the provision's outcome and moves it to the recent ones,
// once the steps running beside it are through too (besideStep).
func (t *tracked) end(err error) {
	l := t.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.beside > 0 {
		t.ended = &err
		return
	}
	t.finish(err)
}

// besideStep runs fn as the named step in a goroutine of its own, beside
// the steps that follow; the provision ends once it is through, and then
// after is called with its outcome.
func (t *tracked) besideStep(name string, fn func() error, after func(error)) {
	l := t.log
	l.mu.Lock()
	t.beside++
	l.mu.Unlock()
	go func() {
		err := t.step(name, fn)
		l.mu.Lock()
		t.beside--
		if t.beside == 0 && t.ended != nil {
			t.finish(*t.ended)
		}
		l.mu.Unlock()
		after(err)
	}()
}

// finish ends the provision with err; the log's lock is held.
func (t *tracked) finish(err error) {
	l := t.log
	t.p.EndedAt = t.now()
	t.p.State = "succeeded"
	if err != nil {
		t.p.State, t.p.Error = "failed", publicText(err)
	}
	delete(l.inflight, t.p.ID)
	l.told(t.p)
	l.recent = append(l.recent, *t.p)
	if len(l.recent) > recentProvisions {
		l.recent = slices.Delete(l.recent, 0, len(l.recent)-recentProvisions)
	}
}

// Provisions returns the provisions in flight, then the recent finished
// ones, newest first in each group.
func (s *Service) Provisions() []Provision {
	return s.provisions.snapshot()
}

// snapshot is Provisions of l.
func (l *provisionLog) snapshot() []Provision {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Provision, 0, len(l.inflight)+len(l.recent))
	for _, p := range l.inflight {
		c := *p
		c.Steps = slices.Clone(p.Steps)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Provision) int { return b.StartedAt.Compare(a.StartedAt) })
	for _, p := range slices.Backward(l.recent) {
		out = append(out, p)
	}
	return out
}

// publicText is what a provision says of a failure: its public code and
// message, never a provider's own text.
func publicText(err error) string {
	if pe, ok := errdefs.Public(err); ok {
		return pe.Code + ": " + pe.Message
	}
	return "internal error"
}
