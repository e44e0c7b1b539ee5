package runtime

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
)

// lockWaiters is how many callers hold or wait for runtime id's lock.
func lockWaiters(s *Service, id string) int {
	s.locks.mu.Lock()
	defer s.locks.mu.Unlock()
	if l, ok := s.locks.locks[id]; ok {
		return l.refs
	}
	return 0
}

// TestSetPortPublicRacingStartAndPause: a port marked public while a start
// or a pause is in the provider waits for it under the runtime's lock, so
// neither change is lost: the action succeeds and the port is public.
func TestSetPortPublicRacingStartAndPause(t *testing.T) {
	for _, tc := range []struct {
		name   string
		op     string // the provider call the action is held in
		before func(ctx context.Context, s *Service, id string) error
		act    func(ctx context.Context, s *Service, id string) error
		want   store.RuntimeStatus
	}{
		{
			name: "start", op: fake.OpCreate,
			act: func(ctx context.Context, s *Service, id string) error {
				_, err := s.Start(ctx, id, nil)
				return err
			},
			want: store.RuntimeRunning,
		},
		{
			name: "pause", op: fake.OpPause,
			before: func(ctx context.Context, s *Service, id string) error {
				_, err := s.Start(ctx, id, nil)
				return err
			},
			act: func(ctx context.Context, s *Service, id string) error {
				_, err := s.Pause(ctx, id, store.PauseUser)
				return err
			},
			want: store.RuntimePaused,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				f := newLookupFixture(t)
				rt := f.project(t, f.ws, "p")
				if tc.before != nil {
					if err := tc.before(ctx, f.svc, rt.ID); err != nil {
						t.Fatal(err)
					}
				}
				gate := make(chan struct{})
				f.prov.SetGate(tc.op, gate)
				acted := make(chan error, 1)
				go func() { acted <- tc.act(ctx, f.svc, rt.ID) }()
				synctest.Wait()
				if n := f.prov.Calls(tc.op); n != 1 {
					t.Fatalf("the %s is not held in the provider (%d calls)", tc.name, n)
				}
				set := make(chan error, 1)
				go func() {
					_, err := f.svc.SetPortPublic(ctx, rt.ID, 8080, true)
					set <- err
				}()
				// Under the lock it waits there; without, it would be done.
				synctest.Wait()
				if n := lockWaiters(f.svc, rt.ID); n != 2 || len(set) != 0 {
					t.Fatalf("the port change does not wait for the lock: %d holders, done %v", n, len(set) != 0)
				}
				close(gate)
				if err := <-acted; err != nil {
					t.Fatalf("%s racing a port change: %v", tc.name, err)
				}
				if err := <-set; err != nil {
					t.Fatalf("port change racing a %s: %v", tc.name, err)
				}
				got, err := f.st.GetRuntime(ctx, rt.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tc.want || !slices.Equal(got.Config.PublicPorts, []int{8080}) {
					t.Fatalf("runtime after both: status %s, public ports %v; want %s and [8080]", got.Status, got.Config.PublicPorts, tc.want)
				}
			})
		})
	}
}

// TestSetPortPublic: marking keeps the list sorted and free of repeats;
// unmarking the last port leaves none (nil, as a new runtime has).
func TestSetPortPublic(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	rt := f.project(t, f.ws, "p")
	for _, step := range []struct {
		port   int
		public bool
		want   []int
	}{
		{3000, true, []int{3000}},
		{80, true, []int{80, 3000}},
		{3000, true, []int{80, 3000}},
		{3000, false, []int{80}},
		{81, false, []int{80}},
		{80, false, nil},
	} {
		got, err := f.svc.SetPortPublic(ctx, rt.ID, step.port, step.public)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Config.PublicPorts, step.want) || (step.want == nil) != (got.Config.PublicPorts == nil) {
			t.Fatalf("set %d public=%v: ports %#v; want %#v", step.port, step.public, got.Config.PublicPorts, step.want)
		}
	}
	if _, err := f.svc.SetPortPublic(ctx, newID(), 80, true); err == nil {
		t.Fatal("a port of a runtime that does not exist was set")
	}
}

// TestSetPortPublicWhileReconciling: a runtime start-up reconciliation
// still holds is not changed: 503 reconciling, and no port is marked.
func TestSetPortPublicWhileReconciling(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	rt := f.project(t, f.ws, "p")
	f.svc.HoldForReconcile([]string{rt.ID})
	_, err := f.svc.SetPortPublic(ctx, rt.ID, 8080, true)
	if pe, ok := errdefs.Public(err); !ok || pe.Code != CodeReconciling || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("a port of a runtime being reconciled = %v; want 503 %s", err, CodeReconciling)
	}
	got, err := f.st.GetRuntime(ctx, rt.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Config.PublicPorts) != 0 {
		t.Fatalf("public ports after a refused change: %v", got.Config.PublicPorts)
	}
}

// racedStore is a store on which race, another server's write, lands
// just before the next write of a runtime's configuration.
type racedStore struct {
	store.Store
	race func()
}

func (r *racedStore) SetRuntimeConfig(ctx context.Context, id string, version int64, c store.RuntimeConfig, at time.Time) (store.Runtime, error) {
	if race := r.race; race != nil {
		r.race = nil
		race()
	}
	return r.Store.SetRuntimeConfig(ctx, id, version, c, at)
}

// racedService is a second server on f's database, on a racedStore.
func racedService(t *testing.T, f *lookupFixture) (*Service, *racedStore) {
	raced := &racedStore{Store: f.st}
	reg := provider.NewRegistry()
	reg.Register(f.prov)
	svc := New(Config{Store: raced, Providers: reg, Instance: "i", Defaults: Defaults{Image: "paddock/base:1"}})
	t.Cleanup(func() { svc.Close() })
	return svc, raced
}

// TestConfigurationRaced: when another server on the same database
// writes the runtime between this one's read and its write of the
// configuration, the write is stale. A port change is made again on the
// row as the other server left it, so both changes are kept; a
// configuration change is too, unless the other server changed the
// configuration it was checked against: then it answers 409 runtime_busy
// (never the store's own code) and the other server's change is kept.
func TestConfigurationRaced(t *testing.T) {
	for _, tc := range configurationRaces() {
		t.Run(tc.name, func(t *testing.T) { testConfigurationRaced(t, tc) })
	}
}

// configurationRace is a case of TestConfigurationRaced: on a runtime,
// started or not, the other server's race lands just before act's write.
type configurationRace struct {
	name    string
	started bool
	race    func(ctx context.Context, other *Service, id string) error
	act     func(ctx context.Context, s *Service, id string) error
	busy    bool // act loses: 409 runtime_busy
	want    func(rt store.Runtime) bool
}

func configurationRaces() []configurationRace {
	idle := func(n int64) Patch { return Patch{IdleTimeoutSeconds: &n} }
	return []configurationRace{
		{
			name: "a port after another port",
			race: func(ctx context.Context, o *Service, id string) error {
				_, err := o.SetPortPublic(ctx, id, 9090, true)
				return err
			},
			act: func(ctx context.Context, s *Service, id string) error {
				_, err := s.SetPortPublic(ctx, id, 8080, true)
				return err
			},
			want: func(rt store.Runtime) bool { return slices.Equal(rt.Config.PublicPorts, []int{8080, 9090}) },
		},
		{
			name: "a port after a pause", started: true,
			race: func(ctx context.Context, o *Service, id string) error {
				_, err := o.Pause(ctx, id, store.PauseUser)
				return err
			},
			act: func(ctx context.Context, s *Service, id string) error {
				_, err := s.SetPortPublic(ctx, id, 8080, true)
				return err
			},
			want: func(rt store.Runtime) bool {
				return rt.Status == store.RuntimePaused && slices.Equal(rt.Config.PublicPorts, []int{8080})
			},
		},
		{
			name: "a configuration after a pause", started: true,
			race: func(ctx context.Context, o *Service, id string) error {
				_, err := o.Pause(ctx, id, store.PauseUser)
				return err
			},
			act: func(ctx context.Context, s *Service, id string) error {
				_, _, err := s.Configure(ctx, id, idle(600))
				return err
			},
			want: func(rt store.Runtime) bool {
				return rt.Status == store.RuntimePaused && rt.Config.IdleTimeoutSeconds == 600
			},
		},
		{
			name: "a configuration after another",
			race: func(ctx context.Context, o *Service, id string) error {
				_, _, err := o.Configure(ctx, id, idle(300))
				return err
			},
			act: func(ctx context.Context, s *Service, id string) error {
				_, _, err := s.Configure(ctx, id, idle(600))
				return err
			},
			busy: true,
			want: func(rt store.Runtime) bool { return rt.Config.IdleTimeoutSeconds == 300 },
		},
	}
}

func testConfigurationRaced(t *testing.T, tc configurationRace) {
	f := newLookupFixture(t)
	rt := f.project(t, f.ws, "p")
	ctx := t.Context()
	if tc.started {
		if _, err := f.svc.Start(ctx, rt.ID, nil); err != nil {
			t.Fatal(err)
		}
	}
	svc, raced := racedService(t, f)
	raced.race = func() {
		if err := tc.race(ctx, f.svc, rt.ID); err != nil {
			t.Errorf("the other server's write: %v", err)
		}
	}
	err := tc.act(ctx, svc, rt.ID)
	if pe, ok := errdefs.Public(err); tc.busy && (!ok || pe.Code != CodeBusy || !errors.Is(err, errdefs.ErrConflict)) {
		t.Fatalf("the losing write = %v; want 409 %s", err, CodeBusy)
	} else if !tc.busy && err != nil {
		t.Fatalf("the write after the other server's: %v", err)
	}
	got, err := f.st.GetRuntime(ctx, rt.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !tc.want(got) {
		t.Fatalf("runtime after the race: status %s, config %+v", got.Status, got.Config)
	}
}

// TestConfigurationRacedEveryTime: a change that another server's writes
// make stale every time it is written is written at most maxWrites times,
// then answers 409 runtime_busy; the other server's changes are kept.
func TestConfigurationRacedEveryTime(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	rt := f.project(t, f.ws, "p")
	svc, raced := racedService(t, f)
	var others []int
	var race func()
	race = func() {
		port := 9000 + len(others)
		if _, err := f.svc.SetPortPublic(ctx, rt.ID, port, true); err != nil {
			t.Errorf("the other server's port change: %v", err)
		}
		others = append(others, port)
		raced.race = race // again before the next write
	}
	raced.race = race
	_, err := svc.SetPortPublic(ctx, rt.ID, 8080, true)
	if pe, ok := errdefs.Public(err); !ok || pe.Code != CodeBusy || !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("a port change raced at every write = %v; want 409 %s", err, CodeBusy)
	}
	if len(others) != maxWrites {
		t.Fatalf("written %d times; want %d", len(others), maxWrites)
	}
	got, err := f.st.GetRuntime(ctx, rt.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Config.PublicPorts, others) {
		t.Fatalf("public ports %v; want the other server's %v", got.Config.PublicPorts, others)
	}
}

// TestReconcilingUntilReleased: start-up reconciliation stays pending
// after its last held runtime is reached, while the server running it has
// steps left (the warm pool, orphaned compute), until it is released; a
// server that does not run it is pending only while it holds runtimes.
func TestReconcilingUntilReleased(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	rt := f.project(t, f.ws, "p")
	f.svc.HoldForReconcile([]string{rt.ID})
	if !f.svc.Reconciling() {
		t.Fatal("not reconciling with a runtime held")
	}
	f.svc.BeginReconcile()
	if _, err := f.svc.Reconcile(ctx, rt.ID); err != nil {
		t.Fatal(err)
	}
	if !f.svc.Reconciling() {
		t.Fatal("reconciliation reported done before its last step")
	}
	f.svc.ReleaseHeld()
	if f.svc.Reconciling() {
		t.Fatal("still reconciling after release")
	}
	f.svc.HoldForReconcile([]string{rt.ID})
	if _, err := f.svc.Reconcile(ctx, rt.ID); err != nil {
		t.Fatal(err)
	}
	if f.svc.Reconciling() {
		t.Fatal("a server that does not run the reconciliation still reports it once its runtimes are reached")
	}
}
