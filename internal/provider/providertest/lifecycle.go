package providertest

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

func (s *suite) testCapabilities(t *testing.T, p provider.Provider) {
	if p.Name() == "" {
		t.Fatal("Name is empty")
	}
	c := p.Capabilities()
	if c.Isolation == "" {
		t.Fatal("Capabilities.Isolation is empty")
	}
	if len(c.Networks) == 0 {
		t.Fatal("Capabilities.Networks is empty: a provider offers at least one network policy")
	}
}

// testLifecycle walks created → running → paused → running → destroyed,
// with the idempotent repeats the contract allows.
func (s *suite) testLifecycle(t *testing.T, p provider.Provider) {
	spec := s.spec(t, p)
	h := s.create(t, p, spec)
	if h.ID == "" {
		t.Fatal("Create returned a handle without an id")
	}
	if h.Provider != p.Name() {
		t.Fatalf("handle provider = %q, want %q", h.Provider, p.Name())
	}
	s.wantState(t, p, h, provider.StateStopped)

	must(t, "Start", p.Start(s.ctx(t), h))
	st := s.wantState(t, p, h, provider.StateRunning)
	if st.StartedAt.IsZero() {
		t.Fatal("a running sandbox reports no StartedAt")
	}
	must(t, "Start while running", p.Start(s.ctx(t), h))
	s.wantState(t, p, h, provider.StateRunning)

	if p.Capabilities().Pause {
		must(t, "Pause", p.Pause(s.ctx(t), h))
		s.wantState(t, p, h, provider.StatePaused)
		must(t, "Pause while paused", p.Pause(s.ctx(t), h))
		s.wantState(t, p, h, provider.StatePaused)
		must(t, "Resume", p.Resume(s.ctx(t), h))
		s.wantState(t, p, h, provider.StateRunning)
		must(t, "Resume while running", p.Resume(s.ctx(t), h))
		s.wantState(t, p, h, provider.StateRunning)
	} else {
		wantKind(t, "Pause without the capability", p.Pause(s.ctx(t), h), errdefs.ErrNotImplemented)
	}

	must(t, "Destroy", p.Destroy(s.ctx(t), h))
	_, err := p.Inspect(s.ctx(t), h)
	wantKind(t, "Inspect after Destroy", err, errdefs.ErrNotFound)
	must(t, "Destroy twice", p.Destroy(s.ctx(t), h))
}

// testTransitions checks the operations a state does not allow.
func (s *suite) testTransitions(t *testing.T, p provider.Provider) {
	if !p.Capabilities().Pause {
		s.testNoPause(t, p)
		return
	}
	h := s.create(t, p, s.spec(t, p))

	// Created, not started.
	wantKind(t, "Pause before Start", p.Pause(s.ctx(t), h), errdefs.ErrFailedPrecondition)
	wantKind(t, "Resume before Start", p.Resume(s.ctx(t), h), errdefs.ErrFailedPrecondition)
	_, err := p.DialAgent(s.ctx(t), h)
	if p.Capabilities().Agent {
		wantKind(t, "DialAgent before Start", err, errdefs.ErrUnavailable)
	} else {
		wantKind(t, "DialAgent without the capability", err, errdefs.ErrNotImplemented)
	}
	s.wantState(t, p, h, provider.StateStopped)

	// Paused.
	must(t, "Start", p.Start(s.ctx(t), h))
	must(t, "Pause", p.Pause(s.ctx(t), h))
	wantKind(t, "Start while paused", p.Start(s.ctx(t), h), errdefs.ErrFailedPrecondition)
	s.wantState(t, p, h, provider.StatePaused)

	// A paused sandbox can be destroyed.
	must(t, "Destroy while paused", p.Destroy(s.ctx(t), h))
	_, err = p.Inspect(s.ctx(t), h)
	wantKind(t, "Inspect after Destroy", err, errdefs.ErrNotFound)
}

// testNoPause checks a provider that declares it cannot pause: before
// and after Start, Pause and Resume are not implemented and change
// nothing, and the agent is reachable only once started.
func (s *suite) testNoPause(t *testing.T, p provider.Provider) {
	h := s.create(t, p, s.spec(t, p))
	wantKind(t, "Pause before Start", p.Pause(s.ctx(t), h), errdefs.ErrNotImplemented)
	if p.Capabilities().Agent {
		_, err := p.DialAgent(s.ctx(t), h)
		wantKind(t, "DialAgent before Start", err, errdefs.ErrUnavailable)
	}
	s.wantState(t, p, h, provider.StateStopped)
	must(t, "Start", p.Start(s.ctx(t), h))
	wantKind(t, "Pause", p.Pause(s.ctx(t), h), errdefs.ErrNotImplemented)
	wantKind(t, "Resume", p.Resume(s.ctx(t), h), errdefs.ErrNotImplemented)
	s.wantState(t, p, h, provider.StateRunning)
	must(t, "Destroy", p.Destroy(s.ctx(t), h))
	_, err := p.Inspect(s.ctx(t), h)
	wantKind(t, "Inspect after Destroy", err, errdefs.ErrNotFound)
}

// testDestroyed checks that every operation on destroyed compute is not
// found, except Destroy, which succeeds.
func (s *suite) testDestroyed(t *testing.T, p provider.Provider) {
	h := s.create(t, p, s.spec(t, p))
	must(t, "Start", p.Start(s.ctx(t), h))
	must(t, "Destroy", p.Destroy(s.ctx(t), h))

	ops := []struct {
		name string
		call func() error
	}{
		{"Start", func() error { return p.Start(s.ctx(t), h) }},
		{"Pause", func() error { return p.Pause(s.ctx(t), h) }},
		{"Resume", func() error { return p.Resume(s.ctx(t), h) }},
		{"Inspect", func() error { _, err := p.Inspect(s.ctx(t), h); return err }},
	}
	if p.Capabilities().Agent {
		ops = append(ops, struct {
			name string
			call func() error
		}{"DialAgent", func() error {
			c, err := p.DialAgent(s.ctx(t), h)
			if c != nil {
				c.Close()
			}
			return err
		}})
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			if unsupported(p, op.name) {
				wantKind(t, op.name+" without the capability", op.call(), errdefs.ErrNotImplemented)
				return
			}
			wantKind(t, op.name+" after Destroy", op.call(), errdefs.ErrNotFound)
		})
	}
	must(t, "Destroy again", p.Destroy(s.ctx(t), h))
}

// testBadHandle feeds handles the provider never made: each operation
// answers invalid argument or not found (Destroy may also succeed), and
// never panics.
func (s *suite) testBadHandle(t *testing.T, p provider.Provider) {
	real := s.create(t, p, s.spec(t, p))
	handles := []struct {
		name string
		h    provider.Handle
	}{
		{"empty", provider.Handle{}},
		{"other provider", provider.Handle{Provider: p.Name() + "-other", ID: real.ID, State: real.State}},
		{"unknown id", provider.Handle{Provider: p.Name(), ID: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}},
		{"garbage id", provider.Handle{Provider: p.Name(), ID: "../../etc/passwd"}},
		{"garbage state", provider.Handle{Provider: p.Name(), ID: real.ID, State: []byte("{not json")}},
		{"future state", provider.Handle{Provider: p.Name(), ID: real.ID, State: []byte(`{"v":999}`)}},
	}
	ok := func(err error, destroy bool) bool {
		return (destroy && err == nil) || errors.Is(err, errdefs.ErrInvalidArgument) || errors.Is(err, errdefs.ErrNotFound)
	}
	for _, tc := range handles {
		t.Run(tc.name, func(t *testing.T) {
			ops := []struct {
				name string
				call func() error
			}{
				{"Start", func() error { return p.Start(s.ctx(t), tc.h) }},
				{"Pause", func() error { return p.Pause(s.ctx(t), tc.h) }},
				{"Resume", func() error { return p.Resume(s.ctx(t), tc.h) }},
				{"Inspect", func() error { _, err := p.Inspect(s.ctx(t), tc.h); return err }},
				{"DialAgent", func() error {
					c, err := p.DialAgent(s.ctx(t), tc.h)
					if c != nil {
						c.Close()
					}
					return err
				}},
				{"Destroy", func() error { return p.Destroy(s.ctx(t), tc.h) }},
			}
			for _, op := range ops {
				if unsupported(p, op.name) {
					wantKind(t, op.name+" without the capability", op.call(), errdefs.ErrNotImplemented)
					continue
				}
				if err := op.call(); !ok(err, op.name == "Destroy") {
					t.Errorf("%s: error %v (kind %v), want invalid argument or not found", op.name, err, errdefs.KindOf(err))
				}
			}
		})
	}
	// None of that touched the real compute.
	s.wantState(t, p, real, provider.StateStopped)
}

// unsupported reports whether op is an operation p declares it cannot do:
// such a call fails with ErrNotImplemented whatever its handle.
func unsupported(p provider.Provider, op string) bool {
	return (op == "Pause" || op == "Resume") && !p.Capabilities().Pause
}
