package runtime

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"

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
// just before the next UpdateRuntime.
type racedStore struct {
	store.Store
	race func()
}

func (r *racedStore) UpdateRuntime(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
	if race := r.race; race != nil {
		r.race = nil
		race()
	}
	return r.Store.UpdateRuntime(ctx, rt)
}

// TestSetPortPublicLosesRace: when another server on the same database
// writes the runtime between this one's read and its write, the write is
// stale: 409 runtime_busy (never the store's own code), and the other
// server's change is the one kept.
func TestSetPortPublicLosesRace(t *testing.T) {
	ctx := t.Context()
	f := newLookupFixture(t)
	rt := f.project(t, f.ws, "p")
	raced := &racedStore{Store: f.st}
	reg := provider.NewRegistry()
	reg.Register(f.prov)
	svc := New(Config{Store: raced, Providers: reg, Instance: "i", Defaults: Defaults{Image: "paddock/base:1"}})
	t.Cleanup(func() { svc.Close() })
	raced.race = func() {
		if _, err := f.svc.SetPortPublic(ctx, rt.ID, 9090, true); err != nil {
			t.Errorf("the other server's port change: %v", err)
		}
	}
	_, err := svc.SetPortPublic(ctx, rt.ID, 8080, true)
	if pe, ok := errdefs.Public(err); !ok || pe.Code != CodeBusy || !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("the losing port change = %v; want 409 %s", err, CodeBusy)
	}
	got, err := f.st.GetRuntime(ctx, rt.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Config.PublicPorts, []int{9090}) {
		t.Fatalf("public ports after the race: %v; want the winner's [9090]", got.Config.PublicPorts)
	}
}
