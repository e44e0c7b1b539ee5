package egress

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// TestRecorderSaysHowFarTheLogIsWritten: once waitRecorded(t) returns,
// every decision the proxy recorded before t can be read from the store,
// with its refusal kind; no fixed wait for the recorder's batches.
func TestRecorderSaysHowFarTheLogIsWritten(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := newRecorder(st, time.Hour, slog.New(slog.DiscardHandler))
	t.Cleanup(r.close)
	for i := range 3 {
		r.record(Decision{
			Identity: Identity{RuntimeID: "rt", SandboxID: "sb"}, At: time.Now(), Method: "CONNECT",
			Host: "api.anthropic.com", Port: 443, Reason: "no allow rule matches", Refusal: RefusalNotAllowed,
		})
		if err := r.waitRecorded(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		ds, err := st.SandboxEgress(ctx, store.EgressQuery{SandboxID: "sb", Hosts: []string{"api.anthropic.com"}, Port: 443})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != i+1 || ds[i].Refusal != string(RefusalNotAllowed) {
			t.Fatalf("after waitRecorded: %d decisions (%+v), want %d with refusal %q", len(ds), ds, i+1, RefusalNotAllowed)
		}
	}
	// A stopped recorder says so rather than leave the caller waiting.
	r.close()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := r.waitRecorded(wctx, time.Now().Add(time.Hour)); err == nil || wctx.Err() != nil {
		t.Fatalf("waitRecorded on a stopped recorder: %v (ctx %v), want its own error", err, wctx.Err())
	}
}

// TestRecorderTellsItsObserver: a decision recorded is told of at once,
// with the id its row gets, before its batch is written.
func TestRecorderTellsItsObserver(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := newRecorder(st, time.Hour, slog.New(slog.DiscardHandler))
	t.Cleanup(r.close)
	told := make(chan store.EgressDecision, 1)
	fn := func(d store.EgressDecision) { told <- d }
	r.observe.Store(&fn)
	r.record(Decision{Identity: Identity{OrgID: "o", WorkspaceID: "w", RuntimeID: "rt", SandboxID: "sb"}, At: time.Now(),
		Method: "CONNECT", Host: "example.com", Port: 443, Allowed: true, Reason: "allowed by rule example.com"})
	d := <-told
	if d.ID == "" || d.OrgID != "o" || d.RuntimeID != "rt" || d.Host != "example.com" || !d.Allowed {
		t.Fatalf("told %+v", d)
	}
	if err := r.waitRecorded(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	ds, err := st.SandboxEgress(ctx, store.EgressQuery{SandboxID: "sb", Hosts: []string{"example.com"}, Port: 443})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].ID != d.ID {
		t.Fatalf("stored %+v, want the decision told of (id %s)", ds, d.ID)
	}
}
