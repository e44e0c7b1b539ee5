package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/testenv"
)

// replicas is runtime services on one PostgreSQL database, each with a
// store of its own (its own connections, as replicas have), all reaching
// one fake provider (the compute they share), and a connection that
// watches the database's advisory locks.
type replicas struct {
	t     *testing.T
	svcs  []*Service
	st    store.Store // the first replica's
	prov  *fake.Provider
	admin *pgx.Conn
	ws    store.Workspace
}

func newReplicas(t *testing.T, n int) *replicas {
	t.Helper()
	ctx := t.Context()
	dsn := testenv.Postgres(t)
	r := &replicas{t: t, prov: fake.New(fake.Config{})}
	reg := provider.NewRegistry()
	reg.Register(r.prov)
	for i := range n {
		st, err := postgres.Open(ctx, dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		s := New(Config{Store: st, Providers: reg, Instance: fmt.Sprintf("r%d", i), Defaults: Defaults{Image: "paddock/base:1"}})
		t.Cleanup(func() { s.Close() })
		if r.st == nil {
			r.st = st
		}
		r.svcs = append(r.svcs, s)
	}
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close(context.Background()) })
	r.admin = admin
	now := time.Now().UTC()
	org := store.Org{ID: newID(), Name: "acme", CreatedAt: now}
	r.ws = store.Workspace{ID: newID(), OrgID: org.ID, Name: "dev", CreatedAt: now}
	if err := r.st.CreateOrg(ctx, org); err != nil {
		t.Fatal(err)
	}
	if err := r.st.CreateWorkspace(ctx, r.ws); err != nil {
		t.Fatal(err)
	}
	return r
}

// runtime creates a project named name and returns its runtime.
func (r *replicas) runtime(name string) store.Runtime {
	r.t.Helper()
	_, rt, err := r.svcs[0].CreateProject(r.t.Context(), r.ws, name, "", ConfigRequest{})
	if err != nil {
		r.t.Fatal(err)
	}
	return rt
}

// all runs act n times at once, spread over the replicas, and returns
// each call's error.
func (r *replicas) all(n int, act func(s *Service) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = act(r.svcs[i%len(r.svcs)]) })
	}
	wg.Wait()
	return errs
}

// oneWins fails t unless exactly one of errs is nil and every other is
// 409 with code loser: the runtime already in the state the winner left.
func oneWins(t *testing.T, what string, errs []error, loser string) {
	t.Helper()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		if pe, ok := errdefs.Public(err); !ok || pe.Code != loser || errdefs.KindOf(err) != errdefs.ErrConflict {
			t.Errorf("a losing %s = %v; want 409 %s", what, err, loser)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d concurrent %ss succeeded, want 1", won, len(errs), what)
	}
}

// sandboxes returns every ledger row of runtime id.
func (r *replicas) sandboxes(id string) []store.Sandbox {
	r.t.Helper()
	rows, _, err := r.st.ListSandboxes(r.t.Context(), store.SandboxFilter{OrgID: r.ws.OrgID, RuntimeID: id}, store.Page{Limit: 100})
	if err != nil {
		r.t.Fatal(err)
	}
	return rows
}

// lockWaiters counts the sessions waiting for an advisory lock.
func (r *replicas) lockWaiters() int {
	r.t.Helper()
	var n int
	err := r.admin.QueryRow(r.t.Context(), `SELECT count(*) FROM pg_locks
		WHERE locktype = 'advisory' AND NOT granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n)
	if err != nil {
		r.t.Fatal(err)
	}
	return n
}

// TestReplicasStartOneSandbox: starts of one runtime on two replicas at
// once give one sandbox row and one compute: one start provisions, every
// other finds the runtime running (409 runtime_already_running, never a
// lost race), and nothing was created to be destroyed.
func TestReplicasStartOneSandbox(t *testing.T) {
	r := newReplicas(t, 2)
	const runtimes, starts = 3, 8
	for i := range runtimes {
		rt := r.runtime(fmt.Sprintf("p%d", i))
		errs := r.all(starts, func(s *Service) error { _, err := s.Start(t.Context(), rt.ID, nil); return err })
		oneWins(t, "start", errs, CodeAlreadyRunning)
		if rows := r.sandboxes(rt.ID); len(rows) != 1 || rows[0].State != store.SandboxRunning {
			t.Fatalf("runtime %d has %d sandbox rows (%+v), want one running", i, len(rows), rows)
		}
	}
	if c, n := r.prov.Calls(fake.OpCreate), r.prov.Count(); c != runtimes || n != runtimes {
		t.Fatalf("the provider was asked to create %d computes and holds %d; want %d of each", c, n, runtimes)
	}
}

// TestReplicasPauseResumeOnce: pauses, resumes and wakes of one runtime on
// two replicas at once reach the provider once each round; the losers
// find the runtime as the winner left it, and it keeps its one sandbox.
func TestReplicasPauseResumeOnce(t *testing.T) {
	r := newReplicas(t, 2)
	rt := r.runtime("p")
	if _, err := r.svcs[1].Start(t.Context(), rt.ID, nil); err != nil {
		t.Fatal(err)
	}
	const rounds, calls = 3, 8
	pause := func(s *Service) error { _, err := s.Pause(t.Context(), rt.ID, store.PauseUser); return err }
	for round := 1; round <= rounds; round++ {
		oneWins(t, "pause", r.all(calls, pause), CodeAlreadyPaused)
		oneWins(t, "resume", r.all(calls, func(s *Service) error { _, err := s.Resume(t.Context(), rt.ID); return err }), CodeNotPaused)
		oneWins(t, "pause", r.all(calls, pause), CodeAlreadyPaused)
		for _, err := range r.all(calls, func(s *Service) error { _, err := s.wake(t.Context(), rt.ID); return err }) {
			if err != nil {
				t.Fatalf("wake: %v", err)
			}
		}
		if p, res := r.prov.Calls(fake.OpPause), r.prov.Calls(fake.OpResume); p != 2*round || res != 2*round {
			t.Fatalf("after %d rounds the provider paused %d and resumed %d times; want %d of each", round, p, res, 2*round)
		}
	}
	if rows := r.sandboxes(rt.ID); len(rows) != 1 || rows[0].State != store.SandboxRunning {
		t.Fatalf("%d sandbox rows (%+v), want the one, running", len(rows), rows)
	}
	if c := r.prov.Calls(fake.OpCreate); c != 1 {
		t.Fatalf("the provider was asked to create %d computes, want 1", c)
	}
}

// TestReplicaWaitsInTheDatabase: while one replica's start is in the
// provider, another replica's starts of the runtime queue on its own lock
// first, so one session of theirs waits in PostgreSQL whatever their
// number; one whose request ends gives up with 503 request_cancelled; the
// rest find the runtime running once the first start is done.
func TestReplicaWaitsInTheDatabase(t *testing.T) {
	r := newReplicas(t, 2)
	a, b := r.svcs[0], r.svcs[1]
	rt := r.runtime("p")
	gate := make(chan struct{})
	r.prov.SetCreateGate(gate)
	first := make(chan error, 1)
	go func() { _, err := a.Start(t.Context(), rt.ID, nil); first <- err }()
	testenv.WaitFor(t, "the first start in the provider", func() bool { return r.prov.Calls(fake.OpCreate) == 1 })

	ctx, cancel := context.WithCancel(t.Context())
	cancelled := make(chan error, 1)
	go func() { _, err := b.Start(ctx, rt.ID, nil); cancelled <- err }()
	testenv.WaitFor(t, "a start waiting in the database", func() bool { return r.lockWaiters() == 1 })
	cancel()
	if err := <-cancelled; !hasCode(err, "request_cancelled") || errdefs.KindOf(err) != errdefs.ErrUnavailable {
		t.Fatalf("a start whose request ended while waiting = %v; want 503 request_cancelled", err)
	}

	const waiting = 4
	done := make(chan error, waiting)
	for range waiting {
		go func() { _, err := b.Start(t.Context(), rt.ID, nil); done <- err }()
	}
	testenv.WaitFor(t, "the starts queued, one of them in the database", func() bool {
		return localWaiters(b, rt.ID) == waiting && r.lockWaiters() == 1
	})
	close(gate)
	if err := <-first; err != nil {
		t.Fatalf("the first start: %v", err)
	}
	errs := make([]error, waiting)
	for i := range errs {
		errs[i] = <-done
	}
	for _, err := range errs {
		if !hasCode(err, CodeAlreadyRunning) {
			t.Errorf("a start that waited = %v; want 409 %s", err, CodeAlreadyRunning)
		}
	}
	if c := r.prov.Calls(fake.OpCreate); c != 1 {
		t.Fatalf("the provider was asked to create %d computes, want 1", c)
	}
}

// hasCode reports whether err's public code is code.
func hasCode(err error, code string) bool {
	pe, ok := errdefs.Public(err)
	return ok && pe.Code == code
}

// localWaiters counts s's callers inside its own lock of runtime id,
// holding or waiting for it.
func localWaiters(s *Service, id string) int {
	s.locks.mu.Lock()
	defer s.locks.mu.Unlock()
	if l, ok := s.locks.locks[id]; ok {
		return l.refs
	}
	return 0
}

// TestReplicaAgentTakesNoLock: a call into a running sandbox (exec, files,
// a terminal: Agent) takes no runtime lock, so it does not wait while
// another replica holds the runtime's for a pause still in the provider.
func TestReplicaAgentTakesNoLock(t *testing.T) {
	r := newReplicas(t, 2)
	a, b := r.svcs[0], r.svcs[1]
	rt := r.runtime("p")
	if _, err := a.Start(t.Context(), rt.ID, nil); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	r.prov.SetGate(fake.OpPause, gate)
	paused := make(chan error, 1)
	go func() { _, err := a.Pause(t.Context(), rt.ID, store.PauseUser); paused <- err }()
	testenv.WaitFor(t, "the pause in the provider", func() bool { return r.prov.Calls(fake.OpPause) == 1 })
	// Were it to wait for the lock, the deadline would end it: 503.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, _, err := b.Agent(ctx, rt.ID); !hasCode(err, CodeAgentNotSupported) {
		t.Fatalf("Agent while another replica pauses = %v; want the fake's %s, at once", err, CodeAgentNotSupported)
	}
	close(gate)
	if err := <-paused; err != nil {
		t.Fatalf("the pause: %v", err)
	}
}
