package provider

import (
	"fmt"
	"slices"
	"sync"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Registry holds the providers an installation offers, by name.
type Registry struct {
	mu        sync.RWMutex
	providers map[string]Provider
	def       string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{providers: map[string]Provider{}}
}

// Register adds p. The first provider registered is the default.
func (r *Registry) Register(p Provider) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.providers[p.Name()]; ok {
		panic(fmt.Sprintf("provider %q registered twice", p.Name()))
	}
	r.providers[p.Name()] = p
	if r.def == "" {
		r.def = p.Name()
	}
}

// Get returns the provider called name, or the default when name is empty.
func (r *Registry) Get(name string) (Provider, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if name == "" {
		name = r.def
	}
	p, ok := r.providers[name]
	if !ok {
		return nil, errdefs.InvalidArgument("unknown_provider", "provider %q is not offered by this installation", name)
	}
	return p, nil
}

// Default returns the default provider's name.
func (r *Registry) Default() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.def
}

// Names returns the registered provider names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.providers))
	for n := range r.providers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
