package session

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// rig is a session service over a runtime service, on a real SQLite
// store and the fake provider (which runs no agent), with one runtime.
// Built in a synctest bubble, the services' clock is the bubble's.
type rig struct {
	ctx     context.Context
	st      store.Store
	rts     *runtime.Service
	secrets *secrets.Service
	s       *Service
	rt      store.Runtime
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	reg := provider.NewRegistry()
	reg.Register(fake.New(fake.Config{}))
	keys, err := secrets.LoadKeyring(t.TempDir(), "")
	must(t, err)
	sec := secrets.New(st, keys, nil)
	rts := runtime.New(runtime.Config{Store: st, Providers: reg, Instance: "i", Defaults: runtime.Defaults{Image: "paddock/base:1"}, Secrets: sec})
	t.Cleanup(func() { rts.Close() })
	now := time.Now().UTC()
	ws := store.Workspace{ID: uuid.NewString(), OrgID: uuid.NewString(), Name: "dev", CreatedAt: now}
	must(t, st.CreateOrg(ctx, store.Org{ID: ws.OrgID, Name: "acme", CreatedAt: now}))
	must(t, st.CreateWorkspace(ctx, ws))
	_, rt, err := rts.CreateProject(ctx, ws, "p", "", runtime.ConfigRequest{})
	must(t, err)
	return &rig{ctx: ctx, st: st, rts: rts, secrets: sec, s: New(Config{Store: st, Runtimes: rts, Secrets: sec}), rt: rt}
}

// session records a running prompt session of the rig's runtime, made now.
func (r *rig) session(t *testing.T) store.Session {
	t.Helper()
	now := time.Now().UTC()
	sess := store.Session{ID: uuid.NewString(), OrgID: r.rt.OrgID, WorkspaceID: r.rt.WorkspaceID, RuntimeID: r.rt.ID,
		Kind: KindPrompt, Harness: "claude", Status: StatusRunning, CreatedAt: now, UpdatedAt: now}
	must(t, r.st.CreateSession(r.ctx, sess))
	return sess
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTranscriptIsPersisted: what a turn records is in the store, in
// order, numbered and timed by the service's clock, and read back as it
// was streamed; past the bounds one note says the rest is not kept, and
// the events that end the turn are kept anyway.
func TestTranscriptIsPersisted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		now := time.Now().UTC()
		sess := r.session(t)
		var streamed []harness.Event
		rec := &recorder{s: r.s, sess: &sess, turn: 1, emit: func(e harness.Event) error {
			streamed = append(streamed, e)
			return nil
		}}
		turn := []harness.Event{
			{Type: harness.EventMessage, Role: "user", Text: "fix the tests"},
			{Type: harness.EventMessage, Role: "assistant", Text: "done"},
			{Type: harness.EventUsage, Usage: &harness.TurnUsage{InputTokens: 10, OutputTokens: 2}},
			{Type: harness.EventDone, Done: &harness.TurnDone{Result: "done"}},
		}
		for _, e := range turn {
			rec.add(r.ctx, e)
			time.Sleep(time.Second)
		}
		got, err := r.s.Transcript(r.ctx, sess)
		must(t, err)
		if len(got) != len(turn) || len(streamed) != len(turn) {
			t.Fatalf("%d events kept, %d streamed; want %d", len(got), len(streamed), len(turn))
		}
		for i, e := range got {
			at := now.Add(time.Duration(i) * time.Second)
			if e.Seq != int64(i+1) || e.Turn != 1 || !e.Time.Equal(at) || e.Type != turn[i].Type || e.Text != turn[i].Text {
				t.Fatalf("event %d: %+v; want seq %d at %v of %+v", i, e, i+1, at, turn[i])
			}
			if streamed[i].Seq != e.Seq {
				t.Fatalf("event %d streamed as seq %d, kept as %d", i, streamed[i].Seq, e.Seq)
			}
		}
		if rec.result != "done" || rec.usage == nil || rec.usage.InputTokens != 10 || rec.failed {
			t.Fatalf("the turn came to result %q usage %+v failed %v", rec.result, rec.usage, rec.failed)
		}

		// A second turn past the bounds.
		sess.Turns = 1
		rec = &recorder{s: r.s, sess: &sess, turn: 2}
		for i := range maxTurnEvents + 5 {
			rec.add(r.ctx, harness.Event{Type: harness.EventMessage, Role: "assistant", Text: strconv.Itoa(i)})
		}
		rec.finishing = true
		rec.add(r.ctx, harness.Event{Type: harness.EventDone, Done: &harness.TurnDone{ExitCode: 1}})
		got, err = r.s.Transcript(r.ctx, sess)
		must(t, err)
		second := got[len(turn):]
		if len(second) != maxTurnEvents+2 {
			t.Fatalf("the second turn kept %d events, want %d (its bound, a note and its end)", len(second), maxTurnEvents+2)
		}
		note, last := second[len(second)-2], second[len(second)-1]
		if note.Error == nil || note.Error.Code != codeTruncated || last.Type != harness.EventDone || last.Turn != 2 || !rec.failed {
			t.Fatalf("the end of a cut turn: %+v then %+v (failed %v)", note, last, rec.failed)
		}
	})
}

// TestTurnWithoutAnAgent: a turn needs its harness's model credential
// among the secrets its sandbox was started with; with it, a turn on a
// paused runtime wakes it through the runtime service before it reaches
// for the sandbox's agent, which the fake provider does not run: 501, and
// no session is recorded.
func TestTurnWithoutAnAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		_, err := r.rts.Start(r.ctx, r.rt.ID, nil)
		must(t, err)
		_, err = r.s.Run(r.ctx, r.rt, Turn{Kind: KindPrompt, Request: Request{Prompt: "hi", Harness: "codex"}}, nil)
		if pe, ok := errdefs.Public(err); !ok || pe.Code != CodeSecretMissing {
			t.Fatalf("a turn without its credential: %v, want %s", err, CodeSecretMissing)
		}
		key := "sk-test"
		cred, err := r.secrets.Create(r.ctx, r.rt.OrgID, r.rt.WorkspaceID, secrets.Spec{Name: "codex", Env: "CODEX_API_KEY", Value: &key})
		must(t, err)
		_, err = r.rts.Reset(r.ctx, r.rt.ID, false)
		must(t, err)
		_, err = r.rts.Start(r.ctx, r.rt.ID, []string{cred.ID})
		must(t, err)
		rt, err := r.rts.Pause(r.ctx, r.rt.ID, store.PauseUser)
		must(t, err)
		_, err = r.s.Run(r.ctx, rt, Turn{Kind: KindPrompt, Request: Request{Prompt: "hi", Harness: "codex"}}, nil)
		if pe, ok := errdefs.Public(err); !ok || pe.Code != runtime.CodeAgentNotSupported {
			t.Fatalf("a turn without an agent: %v, want %s", err, runtime.CodeAgentNotSupported)
		}
		if got, err := r.st.GetRuntime(r.ctx, rt.ID); err != nil || got.Status != store.RuntimeRunning {
			t.Fatalf("the runtime after the turn: %s, %v; want it woken", got.Status, err)
		}
		ss, _, err := r.st.ListSessions(r.ctx, rt.ID, store.Page{Limit: 10})
		if err != nil || len(ss) != 0 {
			t.Fatalf("sessions after a turn that never ran: %+v, %v", ss, err)
		}
		_, err = r.s.Run(r.ctx, rt, Turn{Kind: KindPrompt, Request: Request{Prompt: "hi", SessionID: uuid.NewString()}}, nil)
		if pe, ok := errdefs.Public(err); !ok || pe.Code != CodeSessionNotFound {
			t.Fatalf("a turn of an unknown session: %v", err)
		}
	})
}

// TestDoneComesAfterTheSessionIsFree: a streamed turn's done event goes
// out once the session is recorded and its claim let go, so a client
// that sends the next prompt the moment it reads done is not refused as
// busy and reads the turn's outcome; the first turn's release, called
// again after the next turn claimed the session, keeps that claim.
func TestDoneComesAfterTheSessionIsFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		sess := r.session(t)
		release, ok := r.s.hold(sess.ID)
		if !ok {
			t.Fatal("a new session is busy")
		}
		var streamed []string
		var next func()
		rec := &recorder{s: r.s, sess: &sess, turn: 1, emit: func(e harness.Event) error {
			streamed = append(streamed, e.Type)
			if e.Type != harness.EventDone {
				return nil
			}
			got, err := r.st.GetSession(r.ctx, sess.ID)
			if err != nil || got.Status != StatusCompleted || got.Turns != 1 || got.Events != 3 {
				t.Errorf("the session when done is read: %+v, %v; want it completed with 1 turn of 3 events", got, err)
			}
			var ok bool
			if next, ok = r.s.hold(sess.ID); !ok {
				t.Error("the next prompt, sent on reading done, finds the session busy")
			}
			return nil
		}}
		sess.Turns = 1
		rec.add(r.ctx, harness.Event{Type: harness.EventMessage, Role: "user", Text: "hi"})
		rec.add(r.ctx, harness.Event{Type: harness.EventMessage, Role: "assistant", Text: "hello"})
		rec.finishing = true
		rec.add(r.ctx, harness.Event{Type: harness.EventDone, Done: &harness.TurnDone{Result: "hello"}})
		if len(streamed) != 2 {
			t.Fatalf("streamed before the session was recorded: %v; want the two messages, not done", streamed)
		}
		out, err := r.s.end(r.ctx, rec, release)
		must(t, err)
		if len(streamed) != 3 || streamed[2] != harness.EventDone || out.Session.Status != StatusCompleted || out.Result != "hello" {
			t.Fatalf("streamed %v; the turn came to %+v", streamed, out)
		}
		if next == nil {
			t.Fatal("the next turn never claimed the session")
		}
		release()
		if _, ok := r.s.hold(sess.ID); ok {
			t.Fatal("the first turn's second release let go of the next turn's claim")
		}
		next()
		if _, ok := r.s.hold(sess.ID); !ok {
			t.Fatal("the session is busy after the next turn let it go")
		}
	})
}
