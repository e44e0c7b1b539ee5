package server

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// boundAddrs remembers the addresses each proxy sandbox sends from, read
// from its provider once and again when a request comes from elsewhere
// (at most once a second per sandbox, so a stolen credential cannot make
// the proxy ask the engine at every request).
type boundAddrs struct {
	mu sync.Mutex
	m  map[string]boundEntry // by sandbox id
}

type boundEntry struct {
	addrs []netip.Addr
	at    time.Time
}

// boundMax bounds the map; past it, it starts again empty.
const boundMax = 16384

func newBoundAddrs() *boundAddrs { return &boundAddrs{m: map[string]boundEntry{}} }

// holds reports whether sandbox sb sends from address from; read asks its
// provider for its addresses.
func (b *boundAddrs) holds(ctx context.Context, sb store.Sandbox, from netip.Addr, read func(context.Context, store.Sandbox) ([]netip.Addr, error)) bool {
	b.mu.Lock()
	e, ok := b.m[sb.ID]
	b.mu.Unlock()
	if ok && slices.Contains(e.addrs, from) {
		return true
	}
	if ok && time.Since(e.at) < time.Second {
		return false
	}
	addrs, err := read(ctx, sb)
	if err != nil {
		return false
	}
	b.mu.Lock()
	if len(b.m) >= boundMax {
		clear(b.m)
	}
	b.m[sb.ID] = boundEntry{addrs: addrs, at: time.Now()}
	b.mu.Unlock()
	return slices.Contains(addrs, from)
}

func (b *boundAddrs) forget(sandboxID string) {
	b.mu.Lock()
	delete(b.m, sandboxID)
	b.mu.Unlock()
}

// sandboxAddrs asks sb's provider which addresses it sends from.
func (g *egressGate) sandboxAddrs(ctx context.Context, sb store.Sandbox) ([]netip.Addr, error) {
	p, err := g.providers.Get(sb.Provider)
	if err != nil {
		return nil, err
	}
	na, ok := p.(provider.NetworkAddresser)
	if !ok {
		return nil, errBadCredential
	}
	return na.SandboxAddrs(ctx, provider.Handle{Provider: sb.Provider, ID: sb.ProviderSandboxID, State: sb.ProviderState})
}
