package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/store"
)

// Races on runtimes, sandboxes, bindings and sessions that one writer at a
// time never shows: on a database with many writers, a unique key or a
// conditional write must still let exactly one of concurrent callers
// through, and a write must see the row another one just changed. Also the
// count of live sandboxes, which a metric reads.

// lifecycleRacers is how many callers each of these races runs at once.
const lifecycleRacers = 8

// testConcurrentRuntimeCreates creates runtimes for one new project of w
// at once: one is stored, the others conflict.
func testConcurrentRuntimeCreates(t *testing.T, f *fixture, w store.Workspace) {
	p := f.project(w)
	rts := make([]store.Runtime, lifecycleRacers)
	for i := range rts {
		rts[i] = f.runtimeFor(p)
	}
	errs := race(len(rts), func(i int) error { return f.s.CreateRuntime(f.ctx, rts[i]) })
	conflicts(t, errs)
	got, err := f.s.GetRuntimeByProject(f.ctx, p.ID)
	must(t, err)
	for i, err := range errs {
		if err == nil && got.ID != rts[i].ID {
			t.Fatalf("the project's runtime is %s, want the winner %s", got.ID, rts[i].ID)
		}
	}
}

// testKillRacesExtension kills running rows of o while their expiry is
// moved later: whichever runs first, a killed row never expires.
func testKillRacesExtension(t *testing.T, f *fixture, o store.Org) {
	for range lifecycleRacers {
		t0 := f.next()
		sb := f.sandbox(o, func(x *store.Sandbox) { x.State, x.ExpiresAt = store.SandboxRunning, t0 })
		errs := race(2, func(i int) error {
			if i == 0 {
				_, err := f.s.KillSandbox(f.ctx, sb.ID, sb.Version, "deleted", "", t0)
				return err
			}
			_, err := f.s.ExtendSandboxExpiry(f.ctx, sb.ID, t0.Add(time.Hour))
			return err
		})
		must(t, errors.Join(errs...))
		got, err := f.s.GetSandbox(f.ctx, sb.ID)
		must(t, err)
		if got.State != store.SandboxKilled || !got.ExpiresAt.IsZero() {
			t.Fatalf("row is %s and expires %v; want killed without an expiry", got.State, got.ExpiresAt)
		}
	}
}

// testConcurrentStatusReplaces replaces the status of a new binding of w
// from the same stored status at once: one replacement is made and kept.
func testConcurrentStatusReplaces(t *testing.T, f *fixture, w store.Workspace) {
	rt := f.runtime(w)
	b := store.CapabilityBinding{ID: uuid.NewString(), OrgID: w.OrgID, RuntimeID: rt.ID, Source: "catalog", Name: "memory",
		Version: "1.0.0", Status: []byte(`{"state":"applied"}`), CreatedAt: f.next()}
	must(t, f.s.CreateBinding(f.ctx, b))
	status := func(i int) []byte { return fmt.Appendf(nil, `{"state":"refreshed","by":%d}`, i) }
	replaced := make([]bool, lifecycleRacers)
	errs := race(lifecycleRacers, func(i int) error {
		var err error
		replaced[i], err = f.s.ReplaceBindingStatus(f.ctx, b.ID, b.Status, status(i))
		return err
	})
	must(t, errors.Join(errs...))
	got, err := f.s.GetBinding(f.ctx, b.ID)
	must(t, err)
	wins := 0
	for i, ok := range replaced {
		if ok {
			wins++
			equal(t, "stored status", string(got.Status), string(status(i)))
		}
	}
	if wins != 1 {
		t.Fatalf("%d replacements from one status, want exactly 1", wins)
	}
}

// testConcurrentAppends appends events with one sequence number to a new
// session of w at once: one is stored, the others conflict.
func testConcurrentAppends(t *testing.T, f *fixture, w store.Workspace) {
	rt := f.runtime(w)
	sess := store.Session{ID: uuid.NewString(), OrgID: w.OrgID, WorkspaceID: w.ID, RuntimeID: rt.ID, Kind: "prompt",
		Harness: "codex", Status: "running", CreatedAt: f.next()}
	must(t, f.s.CreateSession(f.ctx, sess))
	body := func(i int) []byte { return fmt.Appendf(nil, `{"writer":%d}`, i) }
	errs := race(lifecycleRacers, func(i int) error {
		return f.s.AppendSessionEvents(f.ctx, []store.SessionEvent{{SessionID: sess.ID, Seq: 1, Type: "message", Body: body(i)}})
	})
	conflicts(t, errs)
	events, err := f.s.ListSessionEvents(f.ctx, sess.ID)
	must(t, err)
	for i, err := range errs {
		if err == nil && (len(events) != 1 || string(events[0].Body) != string(body(i))) {
			t.Fatalf("events %+v; want only the winner's", events)
		}
	}
}

// testCountSandboxes adds rows of o and checks what CountSandboxes adds
// up: the live rows by provider and state, in that order, never a killed
// one.
func testCountSandboxes(t *testing.T, f *fixture, o store.Org) {
	counts := func() map[store.SandboxCount]int {
		t.Helper()
		cs, err := f.s.CountSandboxes(f.ctx)
		must(t, err)
		out := map[store.SandboxCount]int{}
		for i, c := range cs {
			if c.State == store.SandboxKilled {
				t.Fatalf("killed rows were counted: %+v", cs)
			}
			if i > 0 && (cs[i-1].Provider > c.Provider || cs[i-1].Provider == c.Provider && cs[i-1].State >= c.State) {
				t.Fatalf("counts out of (provider, state) order: %+v", cs)
			}
			out[store.SandboxCount{Provider: c.Provider, State: c.State}] = c.Count
		}
		return out
	}
	before := counts()
	added := []store.SandboxCount{
		{Provider: "docker", State: store.SandboxRunning}, {Provider: "docker", State: store.SandboxRunning},
		{Provider: "docker", State: store.SandboxPaused}, {Provider: "fake", State: store.SandboxStarting},
		{Provider: "fake", State: store.SandboxKilled},
	}
	for _, a := range added {
		f.sandbox(o, func(x *store.Sandbox) { x.Provider, x.State = a.Provider, a.State })
	}
	after := counts()
	want := map[store.SandboxCount]int{
		{Provider: "docker", State: store.SandboxRunning}: 2, {Provider: "docker", State: store.SandboxPaused}: 1,
		{Provider: "fake", State: store.SandboxStarting}: 1, {Provider: "fake", State: store.SandboxRunning}: 0,
	}
	for key, n := range want {
		if got := after[key] - before[key]; got != n {
			t.Errorf("%s %s: %d more rows counted, want %d", key.Provider, key.State, got, n)
		}
	}
}
