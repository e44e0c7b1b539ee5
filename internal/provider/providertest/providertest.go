// Package providertest is the conformance suite every provider passes: the
// lifecycle and its transitions, the error kinds the contract promises,
// the agent stream, listing, workspaces that outlive compute, snapshots,
// and concurrent creation.
//
// A provider's own tests call Run with a Harness:
//
//	providertest.Run(t, providertest.Harness{
//		New:  func(t *testing.T) provider.Provider { … },
//		Spec: func(t *testing.T) provider.Spec { … },
//	})
//
// The suite destroys the compute and removes the workspaces and snapshots it
// creates, in t.Cleanup, even when a test fails. Snapshots are labelled
// with Spec's instance (provider.LabelInstance). Besides Spec's instance it also
// creates compute under Spec().Instance+"-other" (to prove List filters),
// so a harness that sweeps leftovers by label should match both, for
// example by prefix.
package providertest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// Harness adapts a provider to the suite.
type Harness struct {
	// New returns the provider under test. It is called once per subtest
	// and releases what it made with t.Cleanup.
	New func(t *testing.T) provider.Provider
	// Spec returns a valid spec for this provider: unique SandboxID and
	// Workspace on every call, and the test's Instance.
	Spec func(t *testing.T) provider.Spec
	// WorkspaceExists, if set, reports whether the named workspace of p
	// exists, so the suite can check that workspaces outlive compute.
	WorkspaceExists func(t *testing.T, p provider.Provider, name string) bool
	// CallTimeout bounds each provider call; 0 means one minute.
	CallTimeout time.Duration
}

// Run runs the conformance suite.
func Run(t *testing.T, h Harness) {
	if h.New == nil || h.Spec == nil {
		t.Fatal("providertest: Harness.New and Harness.Spec are required")
	}
	if h.CallTimeout == 0 {
		h.CallTimeout = time.Minute
	}
	tests := []struct {
		name string
		run  func(s *suite, t *testing.T, p provider.Provider)
	}{
		{"Capabilities", (*suite).testCapabilities},
		{"Lifecycle", (*suite).testLifecycle},
		{"Transitions", (*suite).testTransitions},
		{"DestroyedIsNotFound", (*suite).testDestroyed},
		{"InvalidSpec", (*suite).testInvalidSpec},
		{"UnsupportedNetwork", (*suite).testUnsupportedNetwork},
		{"BadHandle", (*suite).testBadHandle},
		{"Agent", (*suite).testAgent},
		{"List", (*suite).testList},
		{"Workspace", (*suite).testWorkspace},
		{"Snapshot", (*suite).testSnapshot},
		{"ConcurrentCreate", (*suite).testConcurrentCreate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := h.New(t)
			// Every spec of this subtest, nested subtests included, uses
			// the instance Spec gives here, so List sees all of them.
			s := &suite{h: h, instance: h.Spec(t).Instance}
			tc.run(s, t, p)
		})
	}
}

// suite is the state of one subtest.
type suite struct {
	h        Harness
	instance string
}

// ctx returns a context for one provider call.
func (s *suite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), s.h.CallTimeout)
	t.Cleanup(cancel)
	return ctx
}

// cleanupCtx returns a context for cleanup, which runs after t.Context is
// done.
func (s *suite) cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.h.CallTimeout)
}

// spec returns a new spec and removes its workspace when the test ends
// (after the compute using it is destroyed: cleanups run last-in first-out).
func (s *suite) spec(t *testing.T, p provider.Provider) provider.Spec {
	t.Helper()
	spec := s.h.Spec(t)
	spec.Instance = s.instance
	if wr, ok := p.(provider.WorkspaceRemover); ok && spec.Workspace != "" {
		t.Cleanup(func() {
			ctx, cancel := s.cleanupCtx()
			defer cancel()
			if err := wr.RemoveWorkspace(ctx, spec.Workspace); err != nil {
				t.Errorf("cleanup: RemoveWorkspace(%s): %v", spec.Workspace, err)
			}
		})
	}
	return spec
}

// create creates compute for spec and destroys it when the test ends.
func (s *suite) create(t *testing.T, p provider.Provider, spec provider.Spec) provider.Handle {
	t.Helper()
	h, err := p.Create(s.ctx(t), spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	s.destroyAtEnd(t, p, h)
	return h
}

func (s *suite) destroyAtEnd(t *testing.T, p provider.Provider, h provider.Handle) {
	t.Cleanup(func() {
		ctx, cancel := s.cleanupCtx()
		defer cancel()
		if err := p.Destroy(ctx, h); err != nil {
			t.Errorf("cleanup: Destroy(%s): %v", h.ID, err)
		}
	})
}

// wantState fails the test unless Inspect reports want.
func (s *suite) wantState(t *testing.T, p provider.Provider, h provider.Handle, want provider.State) provider.Status {
	t.Helper()
	st, err := p.Inspect(s.ctx(t), h)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if st.State != want {
		t.Fatalf("Inspect state = %q, want %q (%+v)", st.State, want, st)
	}
	return st
}

// wantKind fails the test unless err is of kind want.
func wantKind(t *testing.T, what string, err, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want kind %v", what, want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v (kind %v), want kind %v", what, err, errdefs.KindOf(err), want)
	}
}

// must fails the test if err is not nil.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// CheckAgent speaks HTTP/2 cleartext (prior knowledge) over conn, asks
// GET /healthz and returns an error unless it answers 200. It closes conn.
func CheckAgent(ctx context.Context, conn net.Conn) error {
	used := false
	tr := provider.AgentTransport(func(context.Context) (net.Conn, error) {
		if used {
			return nil, errors.New("the agent stream was already used")
		}
		used = true
		return conn, nil
	})
	defer tr.CloseIdleConnections()
	defer conn.Close()
	return provider.ProbeAgent(ctx, &http.Client{Transport: tr})
}
