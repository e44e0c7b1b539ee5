package providertest

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// testInvalidSpec checks that bad specs are refused as invalid arguments
// and leave nothing behind.
func (s *suite) testInvalidSpec(t *testing.T, p provider.Provider) {
	tests := []struct {
		name   string
		mutate func(*provider.Spec)
	}{
		{"no sandbox id", func(s *provider.Spec) { s.SandboxID = "" }},
		{"path in sandbox id", func(s *provider.Spec) { s.SandboxID = "../" + s.SandboxID }},
		{"no image", func(s *provider.Spec) { s.Image = "" }},
		{"flag as image", func(s *provider.Spec) { s.Image = "--privileged" }},
		{"no workspace", func(s *provider.Spec) { s.Workspace = "" }},
		{"path as workspace", func(s *provider.Spec) { s.Workspace = "/etc" }},
		{"negative cpu", func(s *provider.Spec) { s.Resources.CPUMillis = -1 }},
		{"negative memory", func(s *provider.Spec) { s.Resources.MemoryMB = -1 }},
		{"negative pids", func(s *provider.Spec) { s.Resources.PidsLimit = -5 }},
		{"negative disk", func(s *provider.Spec) { s.Resources.DiskMB = -1 }},
		{"unknown network", func(s *provider.Spec) { s.Network = "bogus" }},
		{"bad env name", func(s *provider.Spec) { s.Env = map[string]string{"A=B": "c"} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := s.spec(t, p)
			tc.mutate(&spec)
			h, err := p.Create(s.ctx(t), spec)
			if err == nil {
				s.destroyAtEnd(t, p, h)
			}
			wantKind(t, "Create", err, errdefs.ErrInvalidArgument)
		})
	}
	s.wantNothingListed(t, p)
}

// testUnsupportedNetwork checks that a policy the provider does not offer
// is refused as not implemented, never silently downgraded.
func (s *suite) testUnsupportedNetwork(t *testing.T, p provider.Provider) {
	offered := p.Capabilities().Networks
	for _, n := range []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen} {
		if slices.Contains(offered, n) {
			continue
		}
		t.Run(string(n), func(t *testing.T) {
			spec := s.spec(t, p)
			spec.Network = n
			h, err := p.Create(s.ctx(t), spec)
			if err == nil {
				s.destroyAtEnd(t, p, h)
			}
			wantKind(t, "Create with network "+string(n), err, errdefs.ErrNotImplemented)
		})
	}
	s.wantNothingListed(t, p)
}

// wantNothingListed fails the test if the provider lists any compute for
// the harness's instance.
func (s *suite) wantNothingListed(t *testing.T, p provider.Provider) {
	t.Helper()
	l, ok := p.(provider.Lister)
	if !ok {
		return
	}
	got, err := l.List(s.ctx(t), s.instance)
	must(t, "List", err)
	if len(got) != 0 {
		t.Fatalf("refused creates left %d pieces of compute behind", len(got))
	}
}

// testAgent dials the agent of a running sandbox and checks its health
// over HTTP/2.
func (s *suite) testAgent(t *testing.T, p provider.Provider) {
	if !p.Capabilities().Agent {
		h := s.create(t, p, s.spec(t, p))
		must(t, "Start", p.Start(s.ctx(t), h))
		_, err := p.DialAgent(s.ctx(t), h)
		wantKind(t, "DialAgent without the capability", err, errdefs.ErrNotImplemented)
		return
	}
	h := s.create(t, p, s.spec(t, p))
	must(t, "Start", p.Start(s.ctx(t), h))
	for i := range 2 { // each dial is a new, independent stream
		conn, err := p.DialAgent(s.ctx(t), h)
		if err != nil {
			t.Fatalf("DialAgent #%d: %v", i+1, err)
		}
		if err := CheckAgent(s.ctx(t), conn); err != nil {
			t.Fatalf("agent health #%d: %v", i+1, err)
		}
	}
	if p.Capabilities().Pause {
		// A paused-then-resumed sandbox's agent answers again.
		must(t, "Pause", p.Pause(s.ctx(t), h))
		must(t, "Resume", p.Resume(s.ctx(t), h))
		conn, err := p.DialAgent(s.ctx(t), h)
		must(t, "DialAgent after Resume", err)
		must(t, "agent health after Resume", CheckAgent(s.ctx(t), conn))
	}
}

// testList checks that List returns exactly this instance's compute, with
// its labels and state.
func (s *suite) testList(t *testing.T, p provider.Provider) {
	l, ok := p.(provider.Lister)
	if !ok {
		t.Skip("the provider does not implement provider.Lister")
	}
	specA, specB := s.spec(t, p), s.spec(t, p)
	specOther := s.spec(t, p)
	specOther.Instance += "-other"
	a, b := s.create(t, p, specA), s.create(t, p, specB)
	other := s.create(t, p, specOther)
	must(t, "Start", p.Start(s.ctx(t), a))

	listed := func(instance string) map[string]provider.Listed {
		t.Helper()
		got, err := l.List(s.ctx(t), instance)
		must(t, "List", err)
		m := map[string]provider.Listed{}
		for _, c := range got {
			if _, dup := m[c.Handle.ID]; dup {
				t.Fatalf("List returned %s twice", c.Handle.ID)
			}
			m[c.Handle.ID] = c
		}
		return m
	}

	got := listed(specA.Instance)
	if len(got) != 2 {
		t.Fatalf("List(%q) returned %d entries, want 2: %v", specA.Instance, len(got), got)
	}
	for _, tc := range []struct {
		h     provider.Handle
		spec  provider.Spec
		state provider.State
	}{{a, specA, provider.StateRunning}, {b, specB, provider.StateStopped}} {
		c, ok := got[tc.h.ID]
		if !ok {
			t.Fatalf("List did not return %s", tc.h.ID)
		}
		if c.Status.State != tc.state {
			t.Errorf("listed %s state = %q, want %q", tc.h.ID, c.Status.State, tc.state)
		}
		if c.Handle.Provider != p.Name() {
			t.Errorf("listed handle provider = %q, want %q", c.Handle.Provider, p.Name())
		}
		for k, want := range map[string]string{
			provider.LabelManaged:  "true",
			provider.LabelInstance: tc.spec.Instance,
			provider.LabelSandbox:  tc.spec.SandboxID,
			provider.LabelRuntime:  tc.spec.RuntimeID,
			provider.LabelOrg:      tc.spec.OrgID,
		} {
			if want != "" && c.Labels[k] != want {
				t.Errorf("listed %s label %s = %q, want %q", tc.h.ID, k, c.Labels[k], want)
			}
		}
		// A listed handle is enough to act on the compute: this is how a
		// restarted server re-attaches.
		if _, err := p.Inspect(s.ctx(t), c.Handle); err != nil {
			t.Errorf("Inspect with a listed handle: %v", err)
		}
	}
	if o := listed(specOther.Instance); len(o) != 1 || o[other.ID].Handle.ID != other.ID {
		t.Fatalf("List(%q) = %v, want only %s", specOther.Instance, o, other.ID)
	}

	must(t, "Destroy", p.Destroy(s.ctx(t), a))
	if got := listed(specA.Instance); len(got) != 1 || got[b.ID].Handle.ID != b.ID {
		t.Fatalf("after Destroy, List = %v, want only %s", got, b.ID)
	}
	_, err := l.List(s.ctx(t), "")
	wantKind(t, "List without an instance", err, errdefs.ErrInvalidArgument)
}

// testWorkspace checks that a workspace outlives its compute, is shared by
// the next compute, cannot be removed while in use, and is removed by
// RemoveWorkspace.
func (s *suite) testWorkspace(t *testing.T, p provider.Provider) {
	wr, ok := p.(provider.WorkspaceRemover)
	if !ok {
		t.Skip("the provider does not implement provider.WorkspaceRemover")
	}
	exists := func(name string) (bool, bool) {
		if s.h.WorkspaceExists == nil {
			return false, false
		}
		return s.h.WorkspaceExists(t, p, name), true
	}
	spec := s.spec(t, p)
	first := s.create(t, p, spec)
	if e, known := exists(spec.Workspace); known && !e {
		t.Fatalf("workspace %s does not exist after Create", spec.Workspace)
	}
	must(t, "Destroy", p.Destroy(s.ctx(t), first))
	if e, known := exists(spec.Workspace); known && !e {
		t.Fatalf("workspace %s did not survive Destroy", spec.Workspace)
	}

	// The next sandbox of the same runtime mounts the same workspace.
	next := spec
	next.SandboxID = s.h.Spec(t).SandboxID
	second := s.create(t, p, next)
	err := wr.RemoveWorkspace(s.ctx(t), spec.Workspace)
	wantKind(t, "RemoveWorkspace while in use", err, errdefs.ErrConflict)
	must(t, "Destroy", p.Destroy(s.ctx(t), second))

	must(t, "RemoveWorkspace", wr.RemoveWorkspace(s.ctx(t), spec.Workspace))
	if e, known := exists(spec.Workspace); known && e {
		t.Fatalf("workspace %s still exists after RemoveWorkspace", spec.Workspace)
	}
	must(t, "RemoveWorkspace twice", wr.RemoveWorkspace(s.ctx(t), spec.Workspace))
	wantKind(t, "RemoveWorkspace with a path", wr.RemoveWorkspace(s.ctx(t), "../etc"), errdefs.ErrInvalidArgument)
}

// testConcurrentCreate creates several sandboxes at once; all succeed with
// distinct ids.
func (s *suite) testConcurrentCreate(t *testing.T, p provider.Provider) {
	const n = 4
	specs := make([]provider.Spec, n)
	for i := range specs {
		specs[i] = s.spec(t, p)
	}
	handles := make([]provider.Handle, n)
	errs := make([]error, n)
	ctx := s.ctx(t)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			handles[i], errs[i] = p.Create(ctx, specs[i])
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, h := range handles {
		if errs[i] == nil {
			s.destroyAtEnd(t, p, h)
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Create: %v", err)
	}
	for _, h := range handles {
		if seen[h.ID] {
			t.Fatalf("two creates returned the same id %s", h.ID)
		}
		seen[h.ID] = true
		s.wantState(t, p, h, provider.StateStopped)
	}
}
