package api

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
)

// live tracks the streams open into sandboxes (foreground execs,
// attaches, terminals) by who opened them, so that revoking a key, ending
// a session or removing a member ends that caller's streams at once
// instead of at their next request.
type live struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]*liveStream
	// parked are the terminals whose link dropped through this server, by
	// terminal id, while the agent may keep them for a re-attach: ending
	// their caller's credential ends them too.
	parked map[string]parkedTerminal
}

// parkedTerminal is a detached terminal: who opened it, until when it is
// kept, and what closes it.
type parkedTerminal struct {
	by    liveStream // its cancel unused
	until time.Time
	close func()
}

// parkTTL is how long a detached terminal is kept in live: longer than
// the agent's grace (60 s); closing one the agent has already ended does
// nothing.
const parkTTL = 2 * time.Minute

// errStreamCut is the cause of a live stream's context when its caller's
// credential was revoked or signed out, or its membership ended or
// lowered (live.end): a terminal it opened is closed, not left to the
// agent's grace.
var errStreamCut = errors.New("the credential that opened the stream no longer holds")

type liveStream struct {
	cred string // "key:<id>" or "session:<id>"
	// via is the console session it came through ("session:<id>"), or
	// cred (auth.Identity.Presented).
	via    string
	org    string
	user   string
	cancel context.CancelCauseFunc
	// cut is set when end picked the stream, whether or not its context
	// had already ended: a terminal it leaves detached is closed, not
	// parked (liveHold.park).
	cut bool
}

// open returns a context for a stream of the caller id in org, and a
// func to call when the stream ends.
func (l *live) open(ctx context.Context, id auth.Identity, org string) (context.Context, func()) {
	ctx, h := l.hold(ctx, id, org)
	return ctx, h.release
}

// A liveHold is a stream's place in live. Its context may end (stop)
// before the place is given up (release, park), so that a credential
// ended in between still reaches what the stream leaves behind.
type liveHold struct {
	l *live
	n uint64
	s *liveStream
}

// hold registers a stream of the caller id in org and returns its
// context, which ends with errStreamCut when end picks the stream.
func (l *live) hold(ctx context.Context, id auth.Identity, org string) (context.Context, *liveHold) {
	ctx, cancel := context.WithCancelCause(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[uint64]*liveStream{}
	}
	l.next++
	s := &liveStream{cred: id.Credential(), via: id.Presented(), org: org, user: id.UserID, cancel: cancel}
	l.m[l.next] = s
	return ctx, &liveHold{l: l, n: l.next, s: s}
}

// stop ends the stream's context and keeps its place.
func (h *liveHold) stop() { h.s.cancel(nil) }

// release ends the stream's context and gives up its place.
func (h *liveHold) release() {
	h.s.cancel(nil)
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	delete(h.l.m, h.n)
}

// park gives up the stream's place for the detached terminal termID it
// leaves (live.park), and reports whether it did: not when the stream was
// cut, even after its context had ended, for the caller to close the
// terminal itself.
func (h *liveHold) park(termID string, now time.Time, close func()) bool {
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	delete(h.l.m, h.n)
	if h.s.cut {
		return false
	}
	h.l.parkLocked(h.s, termID, now, close)
	return true
}

// parkLocked keeps close, which ends the detached terminal termID that
// the stream by left, so that ending by's credential or membership ends
// the terminal too (end), until a re-attach through this server (unpark)
// or parkTTL after now. l.mu is held.
func (l *live) parkLocked(by *liveStream, termID string, now time.Time, close func()) {
	if l.parked == nil {
		l.parked = map[string]parkedTerminal{}
	}
	for k, p := range l.parked {
		if now.After(p.until) {
			delete(l.parked, k)
		}
	}
	l.parked[termID] = parkedTerminal{
		by:    liveStream{cred: by.cred, via: by.via, org: by.org, user: by.user},
		until: now.Add(parkTTL), close: close,
	}
}

// unpark forgets a parked terminal: it was re-attached, and its new
// stream is the one to end.
func (l *live) unpark(termID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.parked, termID)
}

// end cancels the streams match picks, with errStreamCut, and closes the
// parked terminals it picks.
func (l *live) end(match func(s liveStream) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.m {
		if match(*s) {
			s.cut = true
			s.cancel(errStreamCut)
		}
	}
	for k, p := range l.parked {
		if match(p.by) {
			delete(l.parked, k)
			go p.close()
		}
	}
}

// endCredential ends the streams opened with a credential, or through a
// console session ("session:<id>").
func (l *live) endCredential(cred string) {
	l.end(func(s liveStream) bool { return s.cred == cred || s.via == cred })
}

// endMember ends a user's streams in an org ("" for every org).
func (l *live) endMember(org, user string) {
	l.end(func(s liveStream) bool { return s.user == user && (org == "" || s.org == org) })
}

// endSessions ends the streams a user opened with sessions.
func (l *live) endSessions(user string) {
	l.end(func(s liveStream) bool { return s.user == user && strings.HasPrefix(s.cred, "session:") })
}
