// Package component is how paddock's subsystems are put together: each
// declares a Registration (its name, what it requires, its config
// section, how it is made, how it starts and how it stops), and a
// Registry orders them by what they require, initialises them in that
// order, starts them in that order once every one is initialised, and
// closes them in reverse under one deadline (Set.Close). The composition
// root only lists them.
//
// It is modelled on containerd's plugin registration
// (plugin.Registration{Type, ID, Requires, InitFn}), without its types
// and properties: a paddock component has one name and one instance.
package component

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

// Registration declares a component.
type Registration struct {
	// Name is unique in a registry; other components require it by it.
	Name string
	// Requires are the names of the components it needs: they are
	// initialised before it and closed after it, and its Init may get
	// their instances (and no others).
	Requires []string
	// Section names the component's part of the configuration: its name.
	Section string
	// Init makes the component's instance. A component that is not
	// configured may return a nil instance: those that require it see
	// that it is not there.
	// Init makes it and nothing else: what acts on the world (a loop, a
	// goroutine that changes things) waits for Start, so that a start in
	// which a later component fails has done nothing.
	Init func(ctx context.Context, ic *InitContext) (any, error)
	// Start sets the instance going, once every component is
	// initialised; nil when there is nothing to start. ctx lasts as long
	// as the server runs.
	Start func(ctx context.Context, instance any) error
	// Close releases the instance; nil when there is nothing to release.
	// ctx carries the deadline of the whole shutdown. It is called for
	// an instance that was initialised, started or not.
	Close func(ctx context.Context, instance any) error
}

// Def is a Registration whose instance is a T: Init and Close take and
// give a T, and Registration erases it.
type Def[T any] struct {
	Name     string
	Requires []string
	Init     func(ctx context.Context, ic *InitContext) (T, error)
	Start    func(ctx context.Context, instance T) error
	Close    func(ctx context.Context, instance T) error
}

// Registration is d with its instance as any; its Section is its name.
// An Init that returns a nil T (a nil pointer: not configured) gives a
// nil instance, not a non-nil any holding a nil T.
func (d Def[T]) Registration() Registration {
	r := Registration{
		Name: d.Name, Requires: d.Requires, Section: d.Name,
		Init: func(ctx context.Context, ic *InitContext) (any, error) {
			t, err := d.Init(ctx, ic)
			if err != nil || isNil(t) {
				return nil, err
			}
			return t, nil
		},
	}
	if d.Start != nil {
		r.Start = func(ctx context.Context, instance any) error {
			t, _ := instance.(T)
			return d.Start(ctx, t)
		}
	}
	if d.Close != nil {
		r.Close = func(ctx context.Context, instance any) error {
			t, _ := instance.(T)
			return d.Close(ctx, t)
		}
	}
	return r
}

// isNil is whether v is nil or a nil pointer, map, slice, func, channel
// or interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// InitContext is what a component's Init is given: its configuration
// section and the instances of the components it requires.
type InitContext struct {
	reg       Registration
	instances map[string]any
	section   any
}

// Name is the name of the component being initialised.
func (ic *InitContext) Name() string { return ic.reg.Name }

// SectionName is the name of its configuration section.
func (ic *InitContext) SectionName() string { return ic.reg.Section }

// Section is its configuration section, as the registry's sections give
// it (Registry.UseSections); nil when they give none. It is the only
// configuration an Init reads.
func (ic *InitContext) Section() any { return ic.section }

// SectionOf is ic's configuration section as a T; a section that is
// missing or not a T is an error naming the component.
func SectionOf[T any](ic *InitContext) (T, error) {
	t, ok := ic.section.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("component %s: section %q is a %T, not a %T", ic.reg.Name, ic.reg.Section, ic.section, zero)
	}
	return t, nil
}

// Get is the instance of a component this one requires; asking for one
// it does not declare is an error, so Requires stays the whole truth.
func (ic *InitContext) Get(name string) (any, error) {
	for _, r := range ic.reg.Requires {
		if r == name {
			return ic.instances[name], nil
		}
	}
	return nil, fmt.Errorf("component %s asked for %q: %w", ic.reg.Name, name, ErrNotRequired)
}

// ErrNotRequired: an Init asked for a component its Requires do not name.
var ErrNotRequired = errors.New("not one of its requirements")

// Get is the instance of component name as a T, for ic's component. A
// nil instance (a component that is not configured) is T's zero value.
func Get[T any](ic *InitContext, name string) (T, error) {
	var zero T
	v, err := ic.Get(name)
	if err != nil || v == nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("component %s: %s is a %T, not a %T", ic.reg.Name, name, v, zero)
	}
	return t, nil
}
