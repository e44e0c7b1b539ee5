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
}

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
// error names the component that failed.
func (reg *Registry) Init(ctx context.Context, undoWithin time.Duration) (*Set, error) {
	s := &Set{instances: map[string]any{}}
	for _, r := range reg.ordered {
		inst, err := r.Init(ctx, &InitContext{reg: r, instances: s.instances})
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

// Close closes the components in reverse order of initialisation, all
// under ctx's deadline, and returns every error they return. A component
// that has not closed when the deadline passes is left to finish by
// itself, and the rest are closed one by one with their ctx already done,
// so that each does only what cannot wait.
func (s *Set) Close(ctx context.Context) error {
	var errs []error
	for _, r := range slices.Backward(s.inited) {
		if r.Close == nil {
			continue
		}
		if err := closeOne(ctx, r, s.instances[r.Name]); err != nil {
			errs = append(errs, err)
		}
	}
	s.inited = nil
	return errors.Join(errs...)
}

// closeOne closes one component, waiting no longer than ctx allows. Once
// the deadline has passed, a close is waited for: it is told by its done
// ctx to do only what cannot be skipped (close a file, a socket).
func closeOne(ctx context.Context, r Registration, inst any) error {
	wrap := func(err error) error {
		if err != nil {
			return fmt.Errorf("close %s: %w", r.Name, err)
		}
		return nil
	}
	if ctx.Err() != nil {
		return wrap(r.Close(ctx, inst))
	}
	done := make(chan error, 1)
	go func() { done <- r.Close(ctx, inst) }()
	select {
	case err := <-done:
		return wrap(err)
	case <-ctx.Done():
		select {
		case err := <-done: // it finished as the deadline passed
			return wrap(err)
		default:
		}
		return fmt.Errorf("close %s: not done by the deadline: %w", r.Name, context.Cause(ctx))
	}
}
