package api

import (
	"context"
	"strings"
	"sync"

	"github.com/paddockhq/paddock/internal/auth"
)

// live tracks the streams open into sandboxes (foreground execs,
// attaches, terminals) by who opened them, so that revoking a key, ending
// a session or removing a member ends that caller's streams at once
// instead of at their next request.
type live struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]liveStream
}

type liveStream struct {
	cred string // "key:<id>" or "session:<id>"
	// via is the console session it came through ("session:<id>"), or
	// cred (auth.Identity.Presented).
	via    string
	org    string
	user   string
	cancel context.CancelFunc
}

// open returns a context for a stream of the caller of r in org, and a
// func to call when the stream ends.
func (l *live) open(ctx context.Context, id auth.Identity, org string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[uint64]liveStream{}
	}
	l.next++
	n := l.next
	l.m[n] = liveStream{cred: id.Credential(), via: id.Presented(), org: org, user: id.UserID, cancel: cancel}
	return ctx, func() {
		cancel()
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.m, n)
	}
}

// end cancels the streams match picks.
func (l *live) end(match func(s liveStream) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.m {
		if match(s) {
			s.cancel()
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
