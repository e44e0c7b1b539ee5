package session

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// TestRefusedModel reads a real egress log: only a refusal of one of the
// turn's model hosts, from the turn's sandbox, since the turn began, and
// not a failure of the upstream itself, ends the turn; the error names the
// host and says which rule (not allowed, deny, DNS failure).
func TestRefusedModel(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := New(Config{Store: st})
	rt, sb := uuid.NewString(), uuid.NewString()
	start := time.Now().UTC().Truncate(time.Microsecond)
	w, ok := modelWatchOf(store.Sandbox{ID: sb, RuntimeID: rt, Network: "proxy"}, []string{"api.anthropic.com"}, start)
	if !ok {
		t.Fatal("a proxy sandbox with a model host is not watched")
	}
	if _, ok := modelWatchOf(store.Sandbox{ID: sb, RuntimeID: rt, Network: "open"}, []string{"api.anthropic.com"}, start); ok {
		t.Fatal("an open sandbox is watched: the proxy decides nothing for it")
	}
	record := func(d store.EgressDecision) {
		t.Helper()
		d.ID, d.OrgID, d.WorkspaceID, d.Method, d.Port = uuid.NewString(), "o", "w", "CONNECT", 443
		if d.RuntimeID == "" {
			d.RuntimeID = rt
		}
		if d.SandboxID == "" {
			d.SandboxID = sb
		}
		if d.At.IsZero() {
			d.At = start.Add(time.Second)
		}
		if err := st.RecordEgress(ctx, []store.EgressDecision{d}); err != nil {
			t.Fatal(err)
		}
	}
	// None of these ends the turn.
	record(store.EgressDecision{Host: "api.anthropic.com", Allowed: true, Reason: "allowed by rule api.anthropic.com"})
	record(store.EgressDecision{Host: "api.anthropic.com", Reason: "no allow rule matches", At: start.Add(-time.Second)})
	record(store.EgressDecision{Host: "api.anthropic.com", Reason: "no allow rule matches", SandboxID: uuid.NewString()})
	record(store.EgressDecision{Host: "api.anthropic.com", Reason: "upstream failed: timed out"})
	record(store.EgressDecision{Host: "statsig.anthropic.com", Reason: "no allow rule matches"})
	if e := s.refusedModel(ctx, w); e != nil {
		t.Fatalf("ended by %+v", e)
	}

	for _, tc := range []struct{ reason, want string }{
		{"cannot resolve api.anthropic.com", "could not resolve it (DNS failure)"},
		{"denied by rule *.anthropic.com", "refused it: denied by rule *.anthropic.com (deny)"},
		{"no allow rule matches", "refused it: not allowed (no allow rule matches)"},
	} {
		record(store.EgressDecision{Host: "api.anthropic.com", Reason: tc.reason, At: time.Now().UTC()})
		e := s.refusedModel(ctx, w)
		if e == nil || e.Code != CodeModelUnreachable {
			t.Fatalf("%s: %+v, want %s", tc.reason, e, CodeModelUnreachable)
		}
		for _, want := range []string{"api.anthropic.com:443", tc.want, "--allow api.anthropic.com"} {
			if !strings.Contains(e.Message, want) {
				t.Errorf("%s: message %q lacks %q", tc.reason, e.Message, want)
			}
		}
	}
}
