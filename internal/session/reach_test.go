package session

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
	"github.com/paddockhq/paddock/internal/testenv"
)

// reachRig is a real egress log and a runtime in proxy mode whose turns
// call their model at api.anthropic.com:443.
type reachRig struct {
	t     *testing.T
	ctx   context.Context
	st    store.Store
	rt    store.Runtime
	sb    store.Sandbox
	start time.Time
	// rows counts the rows the watch has read.
	rows atomic.Int64
}

// countingStore counts the rows SandboxEgress returns.
type countingStore struct {
	store.Store
	rows *atomic.Int64
}

func (c countingStore) SandboxEgress(ctx context.Context, q store.EgressQuery) ([]store.EgressDecision, error) {
	ds, err := c.Store.SandboxEgress(ctx, q)
	c.rows.Add(int64(len(ds)))
	return ds, err
}

func newReachRig(t *testing.T, allow, deny []string) *reachRig {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &reachRig{t: t, ctx: ctx, start: time.Now().UTC().Truncate(time.Microsecond)}
	r.st = countingStore{Store: st, rows: &r.rows}
	r.rt = store.Runtime{ID: uuid.NewString(), Config: store.RuntimeConfig{Network: store.NetworkConfig{Mode: "proxy", Allow: allow, Deny: deny}}}
	r.sb = store.Sandbox{ID: uuid.NewString(), RuntimeID: r.rt.ID, Network: "proxy"}
	return r
}

var anthropic = harness.Endpoint{Secret: "ANTHROPIC_API_KEY", Host: "api.anthropic.com", Port: 443}

func (r *reachRig) watch() *modelWatch {
	w, ok := modelWatchOf(r.rt, r.sb, anthropic, r.start)
	if !ok {
		r.t.Fatal("a proxy sandbox with a model endpoint is not watched")
	}
	return w
}

// decision is one decision of the proxy about the model endpoint from the
// rig's sandbox, unless d says otherwise.
type decision = store.EgressDecision

var tick atomic.Int64

func (r *reachRig) record(ds ...decision) {
	r.t.Helper()
	for _, d := range ds {
		d.ID, d.OrgID, d.WorkspaceID, d.RuntimeID, d.Method = uuid.NewString(), "o", "w", r.rt.ID, "CONNECT"
		if d.SandboxID == "" {
			d.SandboxID = r.sb.ID
		}
		if d.Host == "" {
			d.Host = "api.anthropic.com"
		}
		if d.Port == 0 {
			d.Port = 443
		}
		if d.At.IsZero() {
			d.At = r.start.Add(time.Duration(tick.Add(1)) * time.Millisecond)
		}
		d.Allowed = d.Refusal == ""
		if err := r.st.RecordEgress(r.ctx, []store.EgressDecision{d}); err != nil {
			r.t.Fatal(err)
		}
	}
}

var (
	allowed     = decision{Reason: "allowed by rule api.anthropic.com"}
	notAllowed  = decision{Reason: "no allow rule matches", Refusal: string(egress.RefusalNotAllowed)}
	unresolved  = decision{Reason: "cannot resolve api.anthropic.com", Refusal: string(egress.RefusalUnresolved)}
	unavailable = decision{Reason: "the policy could not be read; try again", Refusal: string(egress.RefusalUnavailable)}
	upstream    = decision{Reason: "upstream failed: timed out", Refusal: string(egress.RefusalUpstream)}
)

func with(d decision, f func(*decision)) decision {
	f(&d)
	return d
}

// TestModelWatch: only the newest decision of the turn's sandbox about its
// model endpoint (host and port) counts. A request let through clears an
// earlier refusal, an unreadable policy (503, try again) and an upstream
// failure say nothing against the rules, and one failure to resolve may
// pass while the harness runs; a refusal on another port, from another
// sandbox, of another host or from before the turn is not the model's.
func TestModelWatch(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ds           []decision
		running, end bool // whether the turn ends as model_unreachable
	}{
		{"refused", []decision{notAllowed}, true, true},
		{"refused, then let through", []decision{notAllowed, allowed}, false, false},
		{"refused, then the upstream failed", []decision{notAllowed, upstream}, false, false},
		{"let through, then the policy unreadable", []decision{allowed, unavailable}, false, false},
		{"refused, then the policy unreadable", []decision{notAllowed, unavailable}, true, true},
		{"one DNS failure, then let through", []decision{unresolved, allowed}, false, false},
		{"one DNS failure", []decision{unresolved}, false, true},
		{"DNS failures in a row", []decision{unresolved, unresolved}, true, true},
		{"refused on port 80", []decision{with(notAllowed, func(d *decision) { d.Port = 80 })}, false, false},
		{"refused another sandbox", []decision{with(notAllowed, func(d *decision) { d.SandboxID = uuid.NewString() })}, false, false},
		{"refused another host", []decision{with(notAllowed, func(d *decision) { d.Host = "statsig.anthropic.com" })}, false, false},
		{"refused before the turn", []decision{with(notAllowed, func(d *decision) { d.At = time.Now().Add(-time.Hour) })}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReachRig(t, nil, nil)
			r.record(tc.ds...)
			w := r.watch()
			if err := w.read(r.ctx, r.st); err != nil {
				t.Fatal(err)
			}
			if e := w.refused(false); (e != nil) != tc.running {
				t.Errorf("while the harness runs: %+v, want ended %v", e, tc.running)
			}
			if e := w.refused(true); (e != nil) != tc.end || e != nil && e.Code != CodeModelUnreachable {
				t.Errorf("once it failed: %+v, want ended %v", e, tc.end)
			}
		})
	}
}

// TestModelWatchReadsOnlyNewDecisions: each read takes the decisions
// recorded since the last one, however long the turn.
func TestModelWatchReadsOnlyNewDecisions(t *testing.T) {
	r := newReachRig(t, nil, nil)
	for range 3 {
		r.record(allowed, allowed, allowed, allowed, allowed)
	}
	r.record(with(allowed, func(d *decision) { d.Host = "pypi.org" }))
	w := r.watch()
	if err := w.read(r.ctx, r.st); err != nil {
		t.Fatal(err)
	}
	if n := r.rows.Load(); n != 15 {
		t.Fatalf("the first read took %d rows, want the 15 about the model endpoint", n)
	}
	r.record(notAllowed)
	if err := w.read(r.ctx, r.st); err != nil {
		t.Fatal(err)
	}
	if n := r.rows.Load(); n != 16 {
		t.Fatalf("the second read took %d rows, want the one new row", n-15)
	}
	if e := w.refused(false); e == nil {
		t.Fatal("the new refusal is not seen")
	}
}

// TestModelUnreachableSays: the error names the endpoint and why, and the
// fix that fits the reason: an allow command that keeps the runtime's
// other allow rules, removing the deny rule that names the host (keeping
// the others), and no rule at all for a name that does not resolve.
func TestModelUnreachableSays(t *testing.T) {
	for _, tc := range []struct {
		name        string
		allow, deny []string
		d           decision
		want        []string
		not         []string
	}{
		{"not allowed", []string{"pypi.org", "*.npmjs.org"}, nil, notAllowed, []string{
			"api.anthropic.com:443", "refused it: not allowed (no allow rule matches)",
			"paddock runtime set RT --allow pypi.org --allow '*.npmjs.org' --allow api.anthropic.com",
		}, nil},
		{"denied", []string{"*"}, []string{"*.anthropic.com", "evil.example"},
			decision{Reason: "denied by rule *.anthropic.com", Refusal: string(egress.RefusalDenied)}, []string{
				"refused it: denied by rule *.anthropic.com (deny)", "remove the deny rule *.anthropic.com",
				"paddock runtime set RT --deny evil.example",
			}, []string{"--allow"}},
		{"denied by the only rule", []string{"*"}, []string{"api.anthropic.com"},
			decision{Reason: "denied by rule api.anthropic.com", Refusal: string(egress.RefusalDenied)}, []string{
				"paddock runtime set RT --deny ''",
			}, []string{"--allow"}},
		{"DNS failure", []string{"api.anthropic.com"}, nil, unresolved, []string{
			"could not resolve it (DNS failure)",
		}, []string{"paddock runtime set", "--allow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReachRig(t, tc.allow, tc.deny)
			r.record(tc.d)
			w := r.watch()
			if err := w.read(r.ctx, r.st); err != nil {
				t.Fatal(err)
			}
			e := w.refused(true)
			if e == nil {
				t.Fatal("not ended")
			}
			msg := strings.ReplaceAll(e.Message, r.rt.ID, "RT")
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(msg, not) {
					t.Errorf("message %q says %q", msg, not)
				}
			}
		})
	}
}

// TestWatchEndsTheTurn: the watch reads the log every EgressPoll and
// stops the harness at the first refusal; a store it cannot read turns it
// off and says so in the log.
func TestWatchEndsTheTurn(t *testing.T) {
	r := newReachRig(t, nil, nil)
	s := New(Config{Store: r.st, EgressPoll: time.Millisecond})
	ctx, stop := context.WithCancel(r.ctx)
	defer stop()
	ended := s.watch(ctx, r.watch(), stop)
	r.record(allowed, notAllowed)
	<-ctx.Done() // stopped by the watch (the test's own deadline bounds it)
	if e := ended(); e == nil || e.Code != CodeModelUnreachable {
		t.Fatalf("watch ended with %+v", e)
	}

	var logs testenv.Buffer
	s = New(Config{Store: failingStore{r.st}, EgressPoll: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if e := s.watch(r.ctx, r.watch(), func() { t.Error("stopped by a store error") })(); e != nil {
		t.Fatalf("watch ended with %+v", e)
	}
	if !strings.Contains(logs.String(), "no longer watches its model endpoint") {
		t.Fatalf("the log does not say the watch is off: %s", logs.String())
	}
}

type failingStore struct{ store.Store }

func (failingStore) SandboxEgress(context.Context, store.EgressQuery) ([]store.EgressDecision, error) {
	return nil, errors.New("disk I/O error")
}

// TestRefusedAtEnd: a harness that failed by itself is checked against
// the log once the egress recorder has written what the proxy decided
// before it failed: no fixed wait.
func TestRefusedAtEnd(t *testing.T) {
	r := newReachRig(t, nil, nil)
	var waited atomic.Bool
	s := New(Config{Store: r.st, EgressRecorded: func(ctx context.Context, at time.Time) error {
		// The recorder writes what it holds, then answers.
		r.record(notAllowed)
		waited.Store(true)
		return nil
	}})
	if e := s.refusedAtEnd(r.ctx, r.watch()); e == nil || !waited.Load() {
		t.Fatalf("refusedAtEnd = %+v (waited for the recorder: %v)", e, waited.Load())
	}
}

// TestClosingKeepsTheCLIsErrors: a refusal found after the harness failed
// by itself becomes the turn's error (the last one, before done) and the
// CLI's own errors stay in the transcript; a harness the watch stopped has
// its account of being killed dropped.
func TestClosingKeepsTheCLIsErrors(t *testing.T) {
	own := harness.Event{Type: harness.EventError, Error: &harness.TurnError{Code: harness.CodeSessionNotFound, Message: "No conversation found"}}
	done := harness.Event{Type: harness.EventDone, Done: &harness.TurnDone{ExitCode: 1}}
	refusal := &harness.TurnError{Code: CodeModelUnreachable, Message: "refused"}
	got := closing([]harness.Event{own, done}, refusal, false)
	if len(got) != 3 || got[0].Error != own.Error || got[1].Error != refusal || got[2].Type != harness.EventDone {
		t.Fatalf("failed by itself: %+v", got)
	}
	got = closing([]harness.Event{own, done}, refusal, true)
	if len(got) != 2 || got[0].Error != refusal || got[1].Type != harness.EventDone {
		t.Fatalf("stopped by the watch: %+v", got)
	}
	got = closing([]harness.Event{own, done}, nil, false)
	if len(got) != 2 || got[0].Error != own.Error {
		t.Fatalf("no refusal: %+v", got)
	}
}
