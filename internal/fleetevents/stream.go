package fleetevents

import "sync"

// Stream is one listener of a hub: the events fanned out since it
// opened, in order, until it ends.
type Stream struct {
	hub   *Hub
	c     chan Event
	ended chan struct{}
	once  sync.Once
}

// Open opens a stream. A stream that falls Config.Buffer events behind
// is ended rather than made to wait for (its client reconnects and reads
// the lists again); so is every stream when the hub closes or stops
// hearing the other replicas. A closed hub gives a stream already ended.
func (h *Hub) Open() *Stream {
	s := &Stream{hub: h, c: make(chan Event, h.cfg.Buffer), ended: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.end()
		return s
	}
	h.streams[s] = struct{}{}
	return s
}

// Events are the stream's events.
func (s *Stream) Events() <-chan Event { return s.c }

// Ended is closed when the hub ended the stream.
func (s *Stream) Ended() <-chan struct{} { return s.ended }

// Close ends the stream; calling it again does nothing.
func (s *Stream) Close() {
	s.hub.mu.Lock()
	delete(s.hub.streams, s)
	s.hub.mu.Unlock()
	s.end()
}

func (s *Stream) end() { s.once.Do(func() { close(s.ended) }) }

// fanOut numbers e and hands it to every stream, ending those that are
// too far behind.
func (h *Hub) fanOut(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.seq++
	e.Seq = h.seq
	for s := range h.streams {
		select {
		case s.c <- e:
		default:
			h.cfg.Logger.Warn("an event stream fell behind and is ended", "buffer", h.cfg.Buffer)
			delete(h.streams, s)
			s.end()
		}
	}
}

// endAll ends every stream.
func (h *Hub) endAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.streams {
		delete(h.streams, s)
		s.end()
	}
}
