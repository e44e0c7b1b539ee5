package component_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/component"
)

// journal records what components did, in order.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(e string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, e)
}

func (j *journal) all() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.events)
}

// comp is a component that records its init and close in j; its
// instance is its name.
func comp(j *journal, name string, requires ...string) component.Registration {
	return component.Def[string]{
		Name: name, Requires: requires,
		Init: func(context.Context, *component.InitContext) (string, error) {
			j.add("init " + name)
			return name, nil
		},
		Close: func(_ context.Context, inst string) error {
			j.add("close " + inst)
			return nil
		},
	}.Registration()
}

// TestOrder: components initialise after what they require, otherwise in
// the order registered, and close in reverse.
func TestOrder(t *testing.T) {
	var j journal
	reg, err := component.NewRegistry(
		comp(&j, "http", "ledger", "store"),
		comp(&j, "store"),
		comp(&j, "ledger", "runtime"),
		comp(&j, "metrics"),
		comp(&j, "runtime", "store", "metrics"),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"store", "metrics", "runtime", "ledger", "http"}
	if got := reg.Order(); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	set, err := reg.Init(t.Context(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Get("ledger"); got != "ledger" {
		t.Fatalf("instance of ledger: %v", got)
	}
	if err := set.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantEvents := []string{
		"init store", "init metrics", "init runtime", "init ledger", "init http",
		"close http", "close ledger", "close runtime", "close metrics", "close store",
	}
	if got := j.all(); !slices.Equal(got, wantEvents) {
		t.Fatalf("events %v, want %v", got, wantEvents)
	}
}

// TestRegistryRefuses: a cycle, a missing requirement and a name
// registered twice are refused with the components named.
func TestRegistryRefuses(t *testing.T) {
	var j journal
	for _, tc := range []struct {
		name string
		regs []component.Registration
		is   error
		msg  string
	}{
		{"cycle", []component.Registration{comp(&j, "a", "b"), comp(&j, "b", "c"), comp(&j, "c", "a")},
			component.ErrCycle, "components require each other: a → b → c → a"},
		{"self", []component.Registration{comp(&j, "a", "a")}, component.ErrCycle, "a → a"},
		{"missing", []component.Registration{comp(&j, "store"), comp(&j, "ledger", "store", "runtime")},
			component.ErrMissing, `component ledger requires a component that is not registered: "runtime"`},
		{"twice", []component.Registration{comp(&j, "store"), comp(&j, "store")}, nil, "component store is registered twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := component.NewRegistry(tc.regs...)
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("NewRegistry = %v, want %v %q", err, tc.is, tc.msg)
			}
		})
	}
	if len(j.all()) != 0 {
		t.Fatalf("a refused registry initialised something: %v", j.all())
	}
}

// TestInitFailureClosesWhatWasInited: when a component fails to
// initialise, those before it are closed in reverse and the ones after it
// are never initialised; the error is the component's.
func TestInitFailureClosesWhatWasInited(t *testing.T) {
	var j journal
	boom := errors.New("port taken")
	failing := component.Registration{
		Name: "egress", Requires: []string{"providers"},
		Init: func(context.Context, *component.InitContext) (any, error) {
			j.add("init egress")
			return nil, boom
		},
		Close: func(context.Context, any) error { j.add("close egress"); return nil },
	}
	reg, err := component.NewRegistry(comp(&j, "store"), comp(&j, "providers", "store"), failing, comp(&j, "runtime", "egress"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Init(t.Context(), time.Second); !errors.Is(err, boom) {
		t.Fatalf("Init = %v, want %v", err, boom)
	}
	want := []string{"init store", "init providers", "init egress", "close providers", "close store"}
	if got := j.all(); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

// TestGetOnlyWhatIsRequired: an Init gets the instances of what it
// requires, typed, a component that is not configured as the zero value,
// and nothing it does not require; its config section is its name.
func TestGetOnlyWhatIsRequired(t *testing.T) {
	type ssh struct{ addr string }
	var got struct {
		store, section string
		ssh            *ssh
		err            error
	}
	reg, err := component.NewRegistry(
		component.Def[string]{Name: "store", Init: func(context.Context, *component.InitContext) (string, error) { return "db", nil }}.Registration(),
		component.Def[*ssh]{Name: "ssh", Init: func(context.Context, *component.InitContext) (*ssh, error) { return nil, nil }}.Registration(),
		component.Def[string]{Name: "metrics", Init: func(context.Context, *component.InitContext) (string, error) { return "m", nil }}.Registration(),
		component.Def[int]{Name: "http", Requires: []string{"store", "ssh"}, Init: func(_ context.Context, ic *component.InitContext) (int, error) {
			got.section = ic.Section()
			got.store, _ = component.Get[string](ic, "store")
			got.ssh, _ = component.Get[*ssh](ic, "ssh")
			_, got.err = component.Get[string](ic, "metrics")
			return 0, nil
		}}.Registration(),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Init(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	if got.store != "db" || got.ssh != nil || !errors.Is(got.err, component.ErrNotRequired) || got.section != "http" {
		t.Fatalf("http got store %q, ssh %v, metrics error %v, section %q", got.store, got.ssh, got.err, got.section)
	}
}

// TestCloseDeadline: closing shares one deadline. A component that is
// still closing when it passes is reported and left; the components
// before it are still closed, with the ctx already done.
func TestCloseDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var j journal
		release := make(chan struct{})
		defer close(release)
		stuck := component.Registration{
			Name: "http", Requires: []string{"runtime"},
			Init: func(context.Context, *component.InitContext) (any, error) { return nil, nil },
			Close: func(ctx context.Context, _ any) error {
				j.add("close http")
				<-release // ignores ctx: a drain that does not end
				return nil
			},
		}
		var storeCtxErr error
		store := component.Registration{
			Name: "store",
			Init: func(context.Context, *component.InitContext) (any, error) { return nil, nil },
			Close: func(ctx context.Context, _ any) error {
				storeCtxErr = ctx.Err()
				j.add("close store")
				return nil
			},
		}
		reg, err := component.NewRegistry(store, comp(&j, "runtime", "store"), stuck)
		if err != nil {
			t.Fatal(err)
		}
		set, err := reg.Init(t.Context(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
		defer cancel()
		start := time.Now()
		err = set.Close(ctx)
		if err == nil || !strings.Contains(err.Error(), "close http: not done by the deadline") || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close = %v", err)
		}
		if waited := time.Since(start); waited != 15*time.Second {
			t.Fatalf("Close returned after %v, want at the 15s deadline", waited)
		}
		want := []string{"init runtime", "close http", "close runtime", "close store"}
		if got := j.all(); !slices.Equal(got, want) || storeCtxErr == nil {
			t.Fatalf("events %v (store's ctx %v), want %v with the deadline passed", got, storeCtxErr, want)
		}
	})
}
