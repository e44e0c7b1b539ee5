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
			got.section = ic.SectionName()
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

// blocking is a component whose Close ignores its ctx and returns only
// once release is closed, as a drain that overruns does; it records in j
// when its close begins and when it returns.
func blocking(j *journal, release <-chan struct{}, name string, requires ...string) component.Registration {
	return component.Registration{
		Name: name, Requires: requires,
		Init: func(context.Context, *component.InitContext) (any, error) { return nil, nil },
		Close: func(context.Context, any) error {
			j.add("close " + name)
			<-release
			j.add(name + " returned")
			return nil
		},
	}
}

// TestCloseDeadline: closing shares one deadline. A component still
// closing when it passes is reported and left; what it requires waits
// for it until OverrunBound past the deadline, then is closed with its
// ctx done; a close that hangs after the deadline is waited for
// LateGrace. Close returns within those bounds.
func TestCloseDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var j journal
		release := make(chan struct{})
		defer close(release)
		var runtimeCtxErr error
		runtime := component.Def[string]{
			Name: "runtime", Requires: []string{"store"},
			Init: func(context.Context, *component.InitContext) (string, error) { return "runtime", nil },
			Close: func(ctx context.Context, _ string) error {
				runtimeCtxErr = ctx.Err()
				j.add("close runtime")
				return nil
			},
		}.Registration()
		reg, err := component.NewRegistry(blocking(&j, release, "store"), runtime, blocking(&j, release, "http", "runtime"))
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
		for _, name := range []string{"http", "store"} {
			if err == nil || !strings.Contains(err.Error(), "close "+name+": not done by the deadline") || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Close = %v, want %s reported", err, name)
			}
		}
		if waited, want := time.Since(start), 15*time.Second+component.OverrunBound+component.LateGrace; waited != want {
			t.Fatalf("Close returned after %v, want %v: the deadline, the overrun's bound, the store's grace", waited, want)
		}
		want := []string{"close http", "close runtime", "close store"}
		if got := j.all(); !slices.Equal(got, want) || runtimeCtxErr == nil {
			t.Fatalf("events %v (runtime's ctx %v), want %v with the deadline passed", got, runtimeCtxErr, want)
		}
	})
}

// TestOverrunDelaysItsRequirements: a close that overruns the deadline
// holds the closes of what it requires until it returns; the others go
// on closing meanwhile.
func TestOverrunDelaysItsRequirements(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var j journal
		release := make(chan struct{})
		reg, err := component.NewRegistry(comp(&j, "store"), comp(&j, "runtime", "store"), comp(&j, "metrics"),
			blocking(&j, release, "http", "runtime", "store"))
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
		go func() {
			time.Sleep(18 * time.Second) // the drain ends 3s past the deadline
			close(release)
		}()
		err = set.Close(ctx)
		if err == nil || !strings.Contains(err.Error(), "close http: not done by the deadline") {
			t.Fatalf("Close = %v, want http reported", err)
		}
		if waited := time.Since(start); waited != 18*time.Second {
			t.Fatalf("Close returned after %v, want once http returned, at 18s", waited)
		}
		want := []string{
			"init store", "init runtime", "init metrics",
			"close http", "close metrics", "http returned", "close runtime", "close store",
		}
		if got := j.all(); !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
	})
}

// TestStart: Start starts the components in order of initialisation,
// after every one is initialised, and stops at the first that fails,
// with its error as it is.
func TestStart(t *testing.T) {
	var j journal
	boom := errors.New("serve: port taken")
	starting := func(name string, err error, requires ...string) component.Registration {
		return component.Def[string]{
			Name: name, Requires: requires,
			Init: func(context.Context, *component.InitContext) (string, error) {
				j.add("init " + name)
				return name, nil
			},
			Start: func(_ context.Context, inst string) error {
				j.add("start " + inst)
				return err
			},
		}.Registration()
	}
	reg, err := component.NewRegistry(starting("http", boom, "ledger"), starting("ledger", nil, "store"),
		comp(&j, "store"), starting("after", nil))
	if err != nil {
		t.Fatal(err)
	}
	set, err := reg.Init(t.Context(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Start(t.Context()); err != boom {
		t.Fatalf("Start = %v, want %v as it is", err, boom)
	}
	want := []string{"init store", "init ledger", "init http", "init after", "start ledger", "start http"}
	if got := j.all(); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

// TestNilInstance: a component whose Init returns a nil pointer (not
// configured) has a nil instance, not an any holding a nil pointer.
func TestNilInstance(t *testing.T) {
	type gateway struct{}
	reg, err := component.NewRegistry(component.Def[*gateway]{
		Name: "ssh", Init: func(context.Context, *component.InitContext) (*gateway, error) { return nil, nil },
	}.Registration())
	if err != nil {
		t.Fatal(err)
	}
	set, err := reg.Init(t.Context(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Get("ssh"); got != nil {
		t.Fatalf("Get(ssh) = %#v, want nil", got)
	}
}

// TestInitGetsItsSection: each Init is given the section the registry's
// sections return for its name, and SectionOf types it; a section of
// another type is an error, not a panic.
func TestInitGetsItsSection(t *testing.T) {
	type storeSection struct{ path string }
	sections := map[string]any{"store": &storeSection{path: "db"}, "http": "listen"}
	var got struct {
		store *storeSection
		http  any
		err   error
	}
	reg, err := component.NewRegistry(
		component.Def[int]{Name: "store", Init: func(_ context.Context, ic *component.InitContext) (int, error) {
			got.store, _ = component.SectionOf[*storeSection](ic)
			return 0, nil
		}}.Registration(),
		component.Def[int]{Name: "http", Init: func(_ context.Context, ic *component.InitContext) (int, error) {
			got.http = ic.Section()
			_, got.err = component.SectionOf[*storeSection](ic)
			return 0, nil
		}}.Registration(),
	)
	if err != nil {
		t.Fatal(err)
	}
	reg.UseSections(func(name string) any { return sections[name] })
	if _, err := reg.Init(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	if got.store != sections["store"] || got.http != "listen" || got.err == nil {
		t.Fatalf("store got %v, http got %v and typed %v", got.store, got.http, got.err)
	}
}
