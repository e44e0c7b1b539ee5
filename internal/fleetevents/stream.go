package fleetevents

import "sync"

// Stream is one listener of a hub: the events fanned out since it
// opened, in order, until it ends.
type Stream struct {
	hub   *Hub
	org   string // "": every org's events
	c     chan Event
	ended chan struct{}
	once  sync.Once
}

// Open opens a stream of org's events ("" every org's: the hub offers an
// event only to the streams that could see it, and each stream still
// asks the access service about each event). A stream that falls
// Config.Buffer events behind is ended rather than made to wait for (its
// client reconnects and reads the lists again); so is every stream when
// the hub closes or an event of another replica is lost. A closed hub
// gives a stream already ended.
func (h *Hub) Open(org string) *Stream {
	s := &Stream{hub: h, org: org, c: make(chan Event, h.cfg.Buffer), ended: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.end()
		return s
	}
	set := h.streams[org]
	if set == nil {
		set = map[*Stream]struct{}{}
		h.streams[org] = set
	}
	set[s] = struct{}{}
	return s
}

// Events are the stream's events.
func (s *Stream) Events() <-chan Event { return s.c }

// Ended is closed when the hub ended the stream.
func (s *Stream) Ended() <-chan struct{} { return s.ended }

// Close ends the stream; calling it again does nothing.
func (s *Stream) Close() {
	s.hub.mu.Lock()
	s.hub.forget(s)
	s.hub.mu.Unlock()
	s.end()
}

func (s *Stream) end() { s.once.Do(func() { close(s.ended) }) }

// forget takes s out of the hub's streams; h.mu is held.
func (h *Hub) forget(s *Stream) {
	set := h.streams[s.org]
	delete(set, s)
	if len(set) == 0 {
		delete(h.streams, s.org)
	}
}

// org is the org e is of ("" for none).
func (e Event) org() string {
	switch {
	case e.Runtime != nil:
		return e.Runtime.Runtime.OrgID
	case e.Egress != nil:
		return e.Egress.OrgID
	case e.Provision != nil:
		return e.Provision.OrgID
	}
	return ""
}

// fanOut numbers e and hands it to every stream of every org and to
// those of its org, ending those that are too far behind.
func (h *Hub) fanOut(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.seq++
	e.Seq = h.seq
	h.offer(h.streams[""], e)
	if org := e.org(); org != "" {
		h.offer(h.streams[org], e)
	}
}

// offer hands e to the streams of set; h.mu is held.
func (h *Hub) offer(set map[*Stream]struct{}, e Event) {
	for s := range set {
		select {
		case s.c <- e:
		default:
			h.cfg.Logger.Warn("an event stream fell behind and is ended", "buffer", h.cfg.Buffer)
			h.forget(s)
			s.end()
		}
	}
}

// endAll ends every stream.
func (h *Hub) endAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range h.streams {
		for s := range set {
			s.end()
		}
	}
	clear(h.streams)
}
