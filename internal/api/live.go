package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
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
	// ends counts the calls of end. marks counts, by the ends before
	// them, the requests in flight that have not registered a stream yet
	// (mark); ended keeps the ends since the oldest, for hold to catch a
	// credential ended after its request was authenticated and before its
	// stream was registered.
	ends  uint64
	marks map[uint64]int
	ended []liveEnd
}

// liveEnd is one call of end: its number and what it picked.
type liveEnd struct {
	n     uint64
	match func(s liveStream) bool
}

// liveMark is a request's place in live's ends, taken before its
// credential is checked (mark).
type liveMark struct {
	ends uint64
	done bool // given up: registered, or the request ended
}

type liveMarkKey struct{}

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

// cutAnswer answers a call of r whose caller's credential or membership
// ended under it, or while it was opening (errStreamCut cut its
// context): what the door answers the credential as presented (a console
// session, or the key or session token) now, for an action needing need
// where r acts. That is 401 when the credential is gone, 403 when its
// role was lowered, and 404 when its membership in the org ended; one
// the door would let through again (given back meanwhile) is refused as
// a revoked one (endedWhileOpening).
func (a *API) cutAnswer(r *http.Request, need iam.Need) error {
	id := identity(r)
	p, err := a.iam.Reverify(r.Context(), id.Presented())
	if err != nil {
		return err
	}
	t := iam.Target{Org: r.PathValue("org"), Workspace: r.PathValue("workspace"), Action: r.Pattern}
	if _, err := a.iam.Authorize(r.Context(), p, need, t); err != nil {
		return err
	}
	return endedWhileOpening(id)
}

// endedWhileOpening answers a stream whose caller's credential ended
// while it was opening or running: as the door now refuses the
// credential.
func endedWhileOpening(id auth.Identity) error {
	if id.Console != "" || id.SessionID != "" {
		return auth.RefuseSession("revoked")
	}
	return errdefs.Unauthenticated("invalid_api_key", "the API key is malformed, unknown, expired or revoked").
		WithCause(&auth.Refusal{Reason: "revoked", KeyID: id.KeyID})
}

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

// mark notes, on the context of a request about to be authenticated,
// how many ends have been, so that the stream it may register (hold) is
// cut at once if its credential ended in between. Call the func returned
// when the request ends.
func (l *live) mark(ctx context.Context) (context.Context, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.marks == nil {
		l.marks = map[uint64]int{}
	}
	m := &liveMark{ends: l.ends}
	l.marks[m.ends]++
	return context.WithValue(ctx, liveMarkKey{}, m), func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.unmarkLocked(m)
	}
}

// unmarkLocked gives up m and forgets the ends no mark needs. l.mu is
// held.
func (l *live) unmarkLocked(m *liveMark) {
	if m.done {
		return
	}
	m.done = true
	if l.marks[m.ends]--; l.marks[m.ends] == 0 {
		delete(l.marks, m.ends)
	}
	if len(l.ended) == 0 {
		return // nothing to forget: a request costs no walk of the marks
	}
	oldest := l.ends
	for n := range l.marks {
		oldest = min(oldest, n)
	}
	i := 0
	for i < len(l.ended) && l.ended[i].n <= oldest {
		i++
	}
	l.ended = append(l.ended[:0:0], l.ended[i:]...)
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
// context, which ends with errStreamCut when end picks the stream, or
// picked it since its request's mark: a request registers one stream.
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
	if m, ok := ctx.Value(liveMarkKey{}).(*liveMark); ok && !m.done {
		for _, e := range l.ended {
			if e.n > m.ends && e.match(*s) {
				s.cut = true
				s.cancel(errStreamCut)
			}
		}
		l.unmarkLocked(m)
	}
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
	l.ends++
	if len(l.marks) > 0 {
		l.ended = append(l.ended, liveEnd{n: l.ends, match: match})
	}
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
