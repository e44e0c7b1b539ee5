package egress

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
// the proxy ask the engine at every request). What it remembers holds for
// one state of the sandbox (its lifecycle version) and at most boundTTL:
// once a sandbox stops running its addresses are forgotten, and when it
// runs again, maybe at another address, they are read again.
type boundAddrs struct {
	mu  sync.Mutex
	m   map[string]boundEntry // by sandbox id
	now func() time.Time
}

type boundEntry struct {
	addrs   []netip.Addr
	version int64 // the sandbox's lifecycle version when read
	at      time.Time
}

// boundMax bounds the map; past it, it starts again empty.
const boundMax = 16384

// boundTTL is how long a sandbox's addresses are remembered.
const boundTTL = 5 * time.Minute

func newBoundAddrs() *boundAddrs { return &boundAddrs{m: map[string]boundEntry{}, now: time.Now} }

// holds reports whether sandbox sb sends from address from; read asks its
// provider for its addresses. Each change of sb's state (a pause, a stop,
// a resume) moves its version, and what was read before is forgotten.
func (b *boundAddrs) holds(ctx context.Context, sb store.Sandbox, from netip.Addr, read func(context.Context, store.Sandbox) ([]netip.Addr, error)) bool {
	b.mu.Lock()
	e, ok := b.m[sb.ID]
	now := b.now()
	if ok && (e.version != sb.Version || now.Sub(e.at) >= boundTTL) {
		delete(b.m, sb.ID)
		ok = false
	}
	b.mu.Unlock()
	if ok && slices.Contains(e.addrs, from) {
		return true
	}
	if ok && now.Sub(e.at) < time.Second {
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
	b.m[sb.ID] = boundEntry{addrs: addrs, version: sb.Version, at: b.now()}
	b.mu.Unlock()
	return slices.Contains(addrs, from)
}

func (b *boundAddrs) forget(sandboxID string) {
	b.mu.Lock()
	delete(b.m, sandboxID)
	b.mu.Unlock()
}

// sandboxAddrs asks sb's provider which addresses it sends from.
func (g *Gate) sandboxAddrs(ctx context.Context, sb store.Sandbox) ([]netip.Addr, error) {
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
