package component

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Registry is a set of components in the order they initialise: every
// component after those it requires, otherwise in the order they were
// registered.
type Registry struct {
	ordered []Registration
	// sections gives each component its configuration section by name.
	sections func(name string) any
}

// UseSections has Init give each component the section sections returns
// for its Registration.Section (config.Config.Section, in the server).
func (reg *Registry) UseSections(sections func(name string) any) { reg.sections = sections }

// ErrCycle: components require each other, so none can go first.
var ErrCycle = errors.New("components require each other")

// ErrMissing: a component requires one that is not registered.
var ErrMissing = errors.New("requires a component that is not registered")

// NewRegistry orders regs by what they require. A name registered twice,
// a requirement that is not registered, and a cycle are errors that name
// the components.
func NewRegistry(regs ...Registration) (*Registry, error) {
	byName := map[string]Registration{}
	for _, r := range regs {
		if r.Name == "" {
			return nil, errors.New("component: a registration has no name")
		}
		if _, dup := byName[r.Name]; dup {
			return nil, fmt.Errorf("component %s is registered twice", r.Name)
		}
		if r.Init == nil {
			return nil, fmt.Errorf("component %s has no Init", r.Name)
		}
		byName[r.Name] = r
	}
	for _, r := range regs {
		for _, req := range r.Requires {
			if _, ok := byName[req]; !ok {
				return nil, fmt.Errorf("component %s %w: %q", r.Name, ErrMissing, req)
			}
		}
	}
	reg := &Registry{}
	done := map[string]bool{}
	for _, r := range regs {
		if err := reg.visit(r, byName, done, nil); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// visit appends r after what it requires; path is the chain of
// components being visited, for the cycle's message.
func (reg *Registry) visit(r Registration, byName map[string]Registration, done map[string]bool, path []string) error {
	if done[r.Name] {
		return nil
	}
	if i := slices.Index(path, r.Name); i >= 0 {
		return fmt.Errorf("%w: %s", ErrCycle, strings.Join(append(path[i:], r.Name), " → "))
	}
	path = append(path, r.Name)
	for _, req := range r.Requires {
		if err := reg.visit(byName[req], byName, done, path); err != nil {
			return err
		}
	}
	done[r.Name] = true
	reg.ordered = append(reg.ordered, r)
	return nil
}

// Order is the names of the components in the order they initialise.
func (reg *Registry) Order() []string {
	names := make([]string, len(reg.ordered))
	for i, r := range reg.ordered {
		names[i] = r.Name
	}
	return names
}

// Init initialises every component in order. When one fails, those
// already initialised are closed in reverse, within undoWithin, and the
// error is the failing component's own (it names what failed; Init adds
// nothing to it), joined with any the closes return.
func (reg *Registry) Init(ctx context.Context, undoWithin time.Duration) (*Set, error) {
	s := &Set{instances: map[string]any{}}
	for _, r := range reg.ordered {
		ic := &InitContext{reg: r, instances: s.instances}
		if reg.sections != nil {
			ic.section = reg.sections(r.Section)
		}
		inst, err := r.Init(ctx, ic)
		if err != nil {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoWithin)
			defer cancel()
			return nil, errors.Join(err, s.Close(uctx))
		}
		s.instances[r.Name] = inst
		s.inited = append(s.inited, r)
	}
	return s, nil
}

// Set is the initialised components of a registry.
type Set struct {
	inited    []Registration
	instances map[string]any
}

// Get is the instance of component name; nil when it is not configured
// or not initialised.
func (s *Set) Get(name string) any { return s.instances[name] }

// Start starts the components in order of initialisation, each after
// those it requires. It stops at the first that fails and returns its
// error as it is; the caller closes the set.
func (s *Set) Start(ctx context.Context) error {
	for _, r := range s.inited {
		if r.Start == nil {
			continue
		}
		if err := r.Start(ctx, s.instances[r.Name]); err != nil {
			return err
		}
	}
	return nil
}

// LateGrace is how long Close waits for each component that it closes
// after the deadline has passed.
const LateGrace = time.Second

// OverrunBound is how long after the deadline Close goes on waiting for
// a component that overran before it closes what that component
// requires.
const OverrunBound = 5 * time.Second

// Close closes the components in reverse order of initialisation and
// returns every error they return. The rule:
//
//   - Until ctx's deadline, each Close is waited for, all of them under
//     that one deadline.
//   - Once the deadline has passed, the rest are still closed one by
//     one, with their ctx done so that each does only what cannot wait
//     (close a file, a socket), and each is waited for LateGrace.
//   - A Close not done in its wait has overrun: it is reported, and left
//     to finish, but a requirement never closes under it: the Close of
//     each component it requires waits first for it to return, until
//     OverrunBound past the deadline.
//
// So Close returns by the deadline, plus OverrunBound, plus LateGrace
// for each component.
func (s *Set) Close(ctx context.Context) error {
	c := closing{ctx: ctx, overran: map[string]<-chan error{}}
	var errs []error
	for _, r := range slices.Backward(s.inited) {
		if r.Close == nil {
			continue
		}
		c.waitForUsers(r.Name, s.inited)
		if err := c.closeOne(r, s.instances[r.Name]); err != nil {
			errs = append(errs, err)
		}
	}
	s.inited = nil
	return errors.Join(errs...)
}

// closing is one run of Set.Close.
type closing struct {
	ctx context.Context
	// late is when Close saw the deadline pass; zero until then.
	late time.Time
	// overran are the closes not done in their wait, by component.
	overran map[string]<-chan error
}

// passed is whether the deadline has passed, noting when Close first saw
// it.
func (c *closing) passed() bool {
	if c.ctx.Err() == nil {
		return false
	}
	if c.late.IsZero() {
		c.late = time.Now()
	}
	return true
}

// waitForUsers waits, until OverrunBound past the deadline, for the
// closes that overran of the components that require name.
func (c *closing) waitForUsers(name string, inited []Registration) {
	for _, r := range inited {
		done, ok := c.overran[r.Name]
		if !ok || !slices.Contains(r.Requires, name) {
			continue
		}
		c.passed()
		bound := time.NewTimer(time.Until(c.late.Add(OverrunBound)))
		select {
		case <-done:
			delete(c.overran, r.Name)
		case <-bound.C:
		}
		bound.Stop()
	}
}

// closeOne closes one component and waits for it until the deadline, or
// for LateGrace once the deadline has passed. A close not done by then
// has overrun: it is noted and left to finish.
func (c *closing) closeOne(r Registration, inst any) error {
	done := make(chan error, 1)
	go func() { done <- r.Close(c.ctx, inst) }()
	deadline, grace := c.ctx.Done(), (<-chan time.Time)(nil)
	if c.passed() {
		t := time.NewTimer(LateGrace)
		defer t.Stop()
		deadline, grace = nil, t.C
	}
	select {
	case err := <-done:
		return wrapClose(r, err)
	case <-deadline:
	case <-grace:
	}
	select {
	case err := <-done: // it finished as its wait ended
		return wrapClose(r, err)
	default:
	}
	c.passed()
	c.overran[r.Name] = done
	return fmt.Errorf("close %s: not done by the deadline: %w", r.Name, context.Cause(c.ctx))
}

// wrapClose names the component in the error its Close returned.
func wrapClose(r Registration, err error) error {
	if err != nil {
		return fmt.Errorf("close %s: %w", r.Name, err)
	}
	return nil
}
