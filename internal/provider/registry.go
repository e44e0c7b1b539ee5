package provider

import (
	"fmt"
	"slices"
	"sync"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Registry holds the providers an installation offers, by name, and
// those of one org only (the machines an org brought): Names lists the
// installation's, AllNames every one, and Owner says whose one is.
type Registry struct {
	mu        sync.RWMutex
	providers map[string]Provider
	owners    map[string]string // name → the org that owns it
	def       string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{providers: map[string]Provider{}, owners: map[string]string{}}
}

// RegisterFor adds p as a provider of orgID only; it never becomes the
// default. A name taken is refused.
func (r *Registry) RegisterFor(orgID string, p Provider) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.providers[p.Name()]; ok {
		return fmt.Errorf("provider %q is registered already", p.Name())
	}
	r.providers[p.Name()] = p
	r.owners[p.Name()] = orgID
	return nil
}

// Remove takes the org-owned provider name out and returns it (nil when
// there is none). The installation's providers stay.
func (r *Registry) Remove(name string) Provider {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.owners[name]; !ok {
		return nil
	}
	p := r.providers[name]
	delete(r.providers, name)
	delete(r.owners, name)
	return p
}

// Owner is the org that owns provider name, and whether one does (false
// for the installation's providers).
func (r *Registry) Owner(name string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	o, ok := r.owners[name]
	return o, ok
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

// Names returns the installation's provider names, sorted: not those of
// one org.
func (r *Registry) Names() []string {
	return r.names(false)
}

// AllNames returns every registered provider's name, sorted, the orgs'
// too.
func (r *Registry) AllNames() []string {
	return r.names(true)
}

func (r *Registry) names(all bool) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.providers))
	for n := range r.providers {
		if _, owned := r.owners[n]; all || !owned {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
