// Package fake is an in-memory provider that implements the whole provider
// contract (Provider, Lister, WorkspaceRemover, Snapshotter, Relabeler) with the same
// transitions and error kinds as the Docker provider, for API and CLI tests.
// It is a real implementation, held to the same conformance suite
// (providertest), not a mock.
//
// Tests steer it with hooks: FailNext makes the next call of an operation
// fail, SetGate holds calls of an operation until the test releases them,
// Calls counts them, Kill and Vanish simulate compute dying or disappearing
// behind paddock's back, and Count, Live, HasWorkspace and Snapshots
// observe what exists.
//
// The agent is not simulated: DialAgent is not implemented unless
// Config.Agent supplies a dialer, which also turns Capabilities.Agent on.
package fake

import (
	"cmp"
	"context"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
)

// Name is the provider's default registry name.
const Name = "fake"

// Operations, as named by FailNext, SetGate and Calls.
const (
	OpCreate          = "create"
	OpStart           = "start"
	OpPause           = "pause"
	OpResume          = "resume"
	OpDestroy         = "destroy"
	OpInspect         = "inspect"
	OpDial            = "dial"
	OpList            = "list"
	OpRemoveWorkspace = "remove_workspace"
	OpSnapshot        = "snapshot"
	OpRemoveSnapshot  = "remove_snapshot"
	OpRelabel         = "relabel"
)

// Config configures a Provider. The zero value is a working provider
// named "fake" offering network "none" and no agent.
type Config struct {
	// Name is the registry name; "" means "fake".
	Name string
	// Instance labels compute whose Spec names no instance.
	Instance string
	// Networks are the network policies offered; nil means only "none".
	Networks []provider.NetworkPolicy
	// Images, when non-nil, are the only images that exist; Create with
	// any other fails with image_not_found, as Docker does without pulls.
	Images []string
	// Agent, when set, dials the agent of the compute with the given id
	// and turns Capabilities.Agent on.
	Agent func(ctx context.Context, id string) (net.Conn, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Capacity is the largest sandbox the fake host can run; zero fields
	// mean 64 cores and 256 GiB.
	Capacity provider.Resources
	// NoWritableRoot takes writable roots out of Capabilities.
	NoWritableRoot bool
	// GPUs are the fake host's GPUs, as Capabilities reports them.
	GPUs []string
	// NoPause takes pausing out: Capabilities.Pause is false, and Pause
	// and Resume fail with ErrNotImplemented, as a provider whose compute
	// cannot be frozen does.
	NoPause bool
	// NoSnapshot takes snapshots out: Capabilities.Snapshot is false, and
	// Snapshot fails with ErrNotImplemented.
	NoSnapshot bool
}

// Compute is a snapshot of one piece of fake compute.
type Compute struct {
	Handle    provider.Handle
	Spec      provider.Spec
	Labels    map[string]string
	Status    provider.Status
	CreatedAt time.Time
}

type compute struct {
	Compute
	seq int64
}

// Provider is the in-memory provider. It is safe for concurrent use.
type Provider struct {
	cfg Config

	mu         sync.Mutex
	seq        int64
	compute    map[string]*compute // by handle id
	workspaces map[string]map[string]string
	snapSeq    int64
	snapshots  map[string]*snapshot // by ref
	failures   map[string][]error
	gates      map[string]<-chan struct{}
	calls      map[string]int
}

var (
	_ provider.Provider         = (*Provider)(nil)
	_ provider.Lister           = (*Provider)(nil)
	_ provider.WorkspaceRemover = (*Provider)(nil)
	_ provider.Snapshotter      = (*Provider)(nil)
	_ provider.Relabeler        = (*Provider)(nil)
)

// New returns a fake provider.
func New(cfg Config) *Provider {
	if cfg.Name == "" {
		cfg.Name = Name
	}
	if cfg.Networks == nil {
		cfg.Networks = []provider.NetworkPolicy{provider.NetworkNone}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Provider{
		cfg:        cfg,
		compute:    map[string]*compute{},
		workspaces: map[string]map[string]string{},
		snapshots:  map[string]*snapshot{},
		failures:   map[string][]error{},
		gates:      map[string]<-chan struct{}{},
		calls:      map[string]int{},
	}
}

// Name returns the registry name.
func (p *Provider) Name() string { return p.cfg.Name }

// Capabilities declares host-free "fake" isolation, pause, snapshots, the
// configured networks, and the agent when Config.Agent is set.
func (p *Provider) Capabilities() provider.Capabilities {
	networks := slices.Clone(p.cfg.Networks)
	if networks == nil {
		networks = []provider.NetworkPolicy{provider.NetworkNone}
	}
	return provider.Capabilities{
		Isolation:    "fake",
		Pause:        !p.cfg.NoPause,
		Agent:        p.cfg.Agent != nil,
		Networks:     networks,
		Snapshot:     !p.cfg.NoSnapshot,
		WritableRoot: !p.cfg.NoWritableRoot,
		GPUs:         slices.Clone(p.cfg.GPUs),
	}
}

// Capacity reports Config.Capacity, defaulted.
func (p *Provider) Capacity(context.Context) (provider.Resources, error) {
	c := p.cfg.Capacity
	if c.CPUMillis == 0 {
		c.CPUMillis = 64000
	}
	if c.MemoryMB == 0 {
		c.MemoryMB = 256 << 10
	}
	return c, nil
}

// FailNext makes the next call of op (one of the Op constants) return err
// instead of doing anything. Calls queue: two FailNext calls fail the next
// two calls.
func (p *Provider) FailNext(op string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures[op] = append(p.failures[op], err)
}

// SetGate makes every call of op wait, after it is counted and before it
// does anything, until gate yields (a send releases one call, closing
// releases all) or the call's ctx is done. A nil gate removes it.
func (p *Provider) SetGate(op string, gate <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gate == nil {
		delete(p.gates, op)
		return
	}
	p.gates[op] = gate
}

// SetCreateGate is SetGate(OpCreate, gate).
func (p *Provider) SetCreateGate(gate <-chan struct{}) { p.SetGate(OpCreate, gate) }

// Calls returns how many calls of op have begun, including ones held by a
// gate and ones that failed.
func (p *Provider) Calls(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[op]
}

// Count returns how many pieces of compute exist (created and not
// destroyed).
func (p *Provider) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.compute)
}

// Live returns snapshots of the compute that exists, oldest first.
func (p *Provider) Live() []Compute {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs := make([]*compute, 0, len(p.compute))
	for _, c := range p.compute {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *compute) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Compute, len(cs))
	for i, c := range cs {
		out[i] = c.snapshot()
	}
	return out
}

// HasWorkspace reports whether the named workspace exists.
func (p *Provider) HasWorkspace(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.workspaces[name]
	return ok
}

// Workspaces returns the names of the workspaces that exist, sorted.
func (p *Provider) Workspaces() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(p.workspaces))
	for n := range p.workspaces {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Kill simulates compute exiting by itself with exitCode: it becomes
// stopped. It reports whether the compute existed.
func (p *Provider) Kill(id string, exitCode int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.compute[id]
	if !ok {
		return false
	}
	c.Status.State = provider.StateStopped
	c.Status.ExitCode = exitCode
	return true
}

// Vanish simulates compute disappearing behind paddock's back (removed
// outside paddock, host lost). It reports whether the compute existed.
func (p *Provider) Vanish(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.compute[id]
	delete(p.compute, id)
	return ok
}

// enter counts a call of op, waits at op's gate, and returns the failure
// queued for it, if any.
func (p *Provider) enter(ctx context.Context, op string) error {
	p.mu.Lock()
	p.calls[op]++
	gate := p.gates[op]
	p.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if q := p.failures[op]; len(q) > 0 {
		err := q[0]
		p.failures[op] = q[1:]
		return err
	}
	return nil
}

func (c *compute) snapshot() Compute {
	s := c.Compute
	s.Handle.State = slices.Clone(s.Handle.State)
	s.Labels = maps.Clone(s.Labels)
	s.Spec.Env = maps.Clone(s.Spec.Env)
	s.Spec.Labels = maps.Clone(s.Spec.Labels)
	return s
}
