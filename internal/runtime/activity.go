package runtime

import (
	"context"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// Activity keeps a running sandbox from expiring. Every operation through
// the agent (exec, files, terminals, process attach) is activity, and so is
// every moment a streaming call is open: Agent holds the runtime active
// until the caller's context ends, so a long exec the client is attached to,
// or an open terminal, never lets it expire under it.
//
// This process's record is the authority when the expiry round decides
// (under the runtime's lock). The row's expires_at follows it lazily — it is
// written when it lags by more than a tenth of the idle timeout, and when
// the expiry round finds it behind — so the API shows a window that moves
// with activity without a write per call.

// activity is this process's record of runtime activity.
type activity struct {
	mu sync.Mutex
	m  map[string]*activityRecord // by runtime id
}

type activityRecord struct {
	last time.Time // the last operation began or a held one ended
	open int       // operations in flight (streams the client is attached to)
}

func newActivity() *activity { return &activity{m: map[string]*activityRecord{}} }

func (a *activity) record(id string) *activityRecord {
	r, ok := a.m[id]
	if !ok {
		r = &activityRecord{}
		a.m[id] = r
	}
	return r
}

// hold marks an operation on runtime id as begun at now; the returned
// function marks it ended at the time end returns.
func (a *activity) hold(id string, now time.Time, end func() time.Time) func() {
	a.mu.Lock()
	r := a.record(id)
	r.open++
	if now.After(r.last) {
		r.last = now
	}
	a.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t := end()
			a.mu.Lock()
			defer a.mu.Unlock()
			r.open--
			if t.After(r.last) {
				r.last = t
			}
		})
	}
}

// get returns runtime id's last activity and how many operations are open.
func (a *activity) get(id string) (last time.Time, open int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.m[id]; ok {
		return r.last, r.open
	}
	return time.Time{}, 0
}

// forget drops runtime id's record unless operations are still open; called
// when its sandbox is released, so the next one starts fresh.
func (a *activity) forget(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.m[id]; ok && r.open == 0 {
		delete(a.m, id)
	}
}

// deadline is when sb must pause whatever its activity: its last start or
// resume plus the runtime's maximum lifetime. Zero means none.
func deadline(rt store.Runtime, sb store.Sandbox) time.Time {
	if rt.Config.MaxLifetimeSeconds <= 0 || sb.RunningSince.IsZero() {
		return time.Time{}
	}
	return sb.RunningSince.Add(time.Duration(rt.Config.MaxLifetimeSeconds) * time.Second)
}

// capExpiry bounds an expiry by the sandbox's deadline.
func capExpiry(rt store.Runtime, sb store.Sandbox, exp time.Time) time.Time {
	if d := deadline(rt, sb); !d.IsZero() && exp.After(d) {
		return d
	}
	return exp
}

// effectiveExpiry is when sb expires at now given this process's activity
// record, and whether operations are holding it open.
func (s *Service) effectiveExpiry(rt store.Runtime, sb store.Sandbox) (time.Time, bool) {
	last, open := s.activity.get(rt.ID)
	exp := sb.ExpiresAt
	if !last.IsZero() {
		if byActivity := last.Add(idleTimeout(rt)); byActivity.After(exp) {
			exp = byActivity
		}
	}
	return capExpiry(rt, sb, exp), open > 0
}

// touch records activity on rt's running sandbox sb and holds the runtime
// active until ctx ends. It writes the row's expiry when it lags behind by
// more than a tenth of the idle timeout; a lost race with another writer is
// fine, since this process's record decides expiry.
func (s *Service) touch(ctx context.Context, rt store.Runtime, sb store.Sandbox) {
	now := s.now()
	release := s.activity.hold(rt.ID, now, s.now)
	context.AfterFunc(ctx, release)

	idle := idleTimeout(rt)
	want := capExpiry(rt, sb, now.Add(idle))
	if want.Sub(sb.ExpiresAt) <= idle/10 {
		return
	}
	if _, err := s.store.ExtendSandboxExpiry(context.WithoutCancel(ctx), sb.ID, want); err != nil {
		s.logger.DebugContext(ctx, "extending a sandbox's expiry on activity", "sandbox", sb.ID, "err", err)
	}
}
