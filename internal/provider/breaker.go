package provider

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Codes of the errors that say a provider's backend (a Docker engine) is
// not reachable, as opposed to a caller's mistake or one sandbox's trouble.
// Only these trip a breaker.
const (
	CodeProviderUnavailable = "provider_unavailable"
	CodeProviderTimeout     = "provider_timeout"
	// CodeCircuitOpen is the answer while a provider's breaker is open.
	CodeCircuitOpen = "provider_circuit_open"
)

// BreakerState is where a breaker is.
type BreakerState int

const (
	BreakerClosed   BreakerState = iota // calls go through
	BreakerOpen                         // calls fail fast
	BreakerHalfOpen                     // one probe is let through
)

func (s BreakerState) String() string {
	return [...]string{"closed", "open", "half-open"}[s]
}

// BreakerConfig tunes a Breaker.
type BreakerConfig struct {
	// Failures is how many backend failures in a row open it; 0 means 3.
	Failures int
	// Cooldown is how long it stays open before it probes; 0 means 2 s.
	// Each failed probe doubles it, up to MaxCooldown (0: 30 s).
	Cooldown    time.Duration
	MaxCooldown time.Duration
	// OnState, when set, is told every state the breaker enters.
	OnState func(name string, s BreakerState)
	// OnError, when set, is told every backend failure (op: "create",
	// "start", …).
	OnError func(name, op string)
}

// Breaker is a circuit breaker around a provider. When the provider's
// backend fails Failures calls in a row (errors with the codes above, not
// a caller's mistakes), the breaker opens: every call fails at once with
// 503 provider_circuit_open instead of waiting on a dead engine. While
// open it probes the backend itself (Ping when the provider has it, else
// the next call after the cooldown) and closes again on the first success,
// so it recovers with or without traffic.
//
// It forwards the optional interfaces (Lister, WorkspaceRemover,
// Snapshotter, Sizer, AgentLogger, ImageInspector, ImageChecker,
// Relabeler, Networker, NetworkAddresser, Grouper, and Ping)
// through the same breaker; one the provider lacks answers ErrNotImplemented
// (or, for Sizer, an unknown capacity), which callers already expect of
// providers whose Capabilities say so.
type Breaker struct {
	p   Provider
	cfg BreakerConfig

	mu       sync.Mutex
	state    BreakerState
	fails    int
	cooldown time.Duration
	openedAt time.Time
	probing  bool // a call is the half-open probe
	pinging  bool // the probe goroutine runs
	lastErr  error
	stop     chan struct{}
	stopOnce sync.Once
}

// NewBreaker wraps p.
func NewBreaker(p Provider, cfg BreakerConfig) *Breaker {
	if cfg.Failures <= 0 {
		cfg.Failures = 3
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = 2 * time.Second
	}
	if cfg.MaxCooldown <= 0 {
		cfg.MaxCooldown = 30 * time.Second
	}
	b := &Breaker{p: p, cfg: cfg, cooldown: cfg.Cooldown, stop: make(chan struct{})}
	b.report(BreakerClosed)
	return b
}

// Unwrap returns the provider the breaker guards.
func (b *Breaker) Unwrap() Provider { return b.p }

// Close stops the breaker's probing.
func (b *Breaker) Close() { b.stopOnce.Do(func() { close(b.stop) }) }

// State returns the breaker's state and, when it is not closed, the
// failure that opened it.
func (b *Breaker) State() (BreakerState, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state, b.lastErr
}

func (b *Breaker) report(s BreakerState) {
	if b.cfg.OnState != nil {
		b.cfg.OnState(b.p.Name(), s)
	}
}

// backendDown reports whether err, from operation op, says the backend is
// unreachable: it could not be reached at all, or it did not answer a
// health check (a ping is trivial, so its timeout means a hung engine). A
// timeout of any other call may be the caller's deadline on slow but
// honest work (a large pull or snapshot), so it does not count.
func backendDown(op string, err error) bool {
	pe, ok := errdefs.Public(err)
	return ok && (pe.Code == CodeProviderUnavailable || pe.Code == CodeProviderTimeout && op == "ping")
}

// probeDueLocked reports whether the next call should be the probe of an
// open breaker: its provider has no Ping and the cooldown is over.
func (b *Breaker) probeDueLocked() bool {
	_, canPing := b.p.(pinger)
	return b.state == BreakerOpen && !canPing && time.Since(b.openedAt) >= b.cooldown && !b.probing
}

// admit lets a call through or refuses it while the breaker is open.
func (b *Breaker) admit() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.state == BreakerClosed:
		return nil
	case b.probeDueLocked():
		b.probing = true // this call is the probe
		b.state = BreakerHalfOpen
		b.report(BreakerHalfOpen)
		return nil
	}
	return b.failFastLocked()
}

// failFastLocked is the answer while the breaker is open.
func (b *Breaker) failFastLocked() error {
	return errdefs.Unavailable(CodeCircuitOpen,
		"provider %s is not reachable and is failing fast; it is retried by itself and recovers when its backend answers", b.p.Name()).WithCause(b.lastErr)
}

// done records a call's outcome.
func (b *Breaker) done(op string, err error) {
	down := backendDown(op, err)
	if down && b.cfg.OnError != nil {
		b.cfg.OnError(b.p.Name(), op)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !down {
		// The backend answered (with a result, or a refusal of its own):
		// the failures are no longer in a row.
		b.closeLocked()
		return
	}
	b.lastErr = err
	b.fails++
	switch {
	case b.state == BreakerHalfOpen:
		b.openLocked(min(2*b.cooldown, b.cfg.MaxCooldown))
	case b.state == BreakerClosed && b.fails >= b.cfg.Failures:
		b.openLocked(b.cfg.Cooldown)
	}
}

func (b *Breaker) closeLocked() {
	b.fails = 0
	b.probing = false
	b.cooldown = b.cfg.Cooldown
	if b.state != BreakerClosed {
		b.state = BreakerClosed
		b.lastErr = nil
		b.report(BreakerClosed)
	}
}

func (b *Breaker) openLocked(cooldown time.Duration) {
	b.state = BreakerOpen
	b.cooldown = cooldown
	b.openedAt = time.Now()
	b.probing = false
	b.report(BreakerOpen)
	if pg, ok := b.p.(pinger); ok && !b.pinging {
		b.pinging = true
		go b.probe(pg)
	}
}

// probe pings the backend after each cooldown until it answers, then
// closes the breaker. One runs per opening.
func (b *Breaker) probe(pg pinger) {
	defer func() {
		b.mu.Lock()
		b.pinging = false
		b.mu.Unlock()
	}()
	for {
		b.mu.Lock()
		wait := b.cooldown
		b.mu.Unlock()
		select {
		case <-b.stop:
			return
		case <-time.After(wait):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := pg.Ping(ctx)
		cancel()
		b.mu.Lock()
		if b.state == BreakerClosed {
			b.mu.Unlock()
			return
		}
		if !backendDown("ping", err) {
			b.closeLocked() // it answered, even if with a complaint of its own
			b.mu.Unlock()
			return
		}
		b.lastErr = err
		b.cooldown = min(2*b.cooldown, b.cfg.MaxCooldown)
		b.mu.Unlock()
	}
}

// Available answers nil while calls go through, and the fail-fast error
// while the breaker is open, without counting as a call: an action checks
// it before it records anything, so a dead engine leaves no trace.
//
// A provider without Ping is probed by its next call after the cooldown:
// then an action may go ahead and be that call. While a probe is in
// flight (half-open), actions are refused like the rest.
func (b *Breaker) Available() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == BreakerClosed || b.probeDueLocked() {
		return nil // when the probe is due, the action's first call is it
	}
	return b.failFastLocked()
}

// call runs fn through the breaker.
func call[T any](b *Breaker, op string, fn func() (T, error)) (T, error) {
	if err := b.admit(); err != nil {
		var zero T
		return zero, err
	}
	v, err := fn()
	b.done(op, err)
	return v, err
}

func call0(b *Breaker, op string, fn func() error) error {
	_, err := call(b, op, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

// pinger is implemented by providers that can check their backend.
type pinger interface {
	Ping(ctx context.Context) error
}

// Networker is implemented by providers whose sandboxes join egress
// networks of their own (docker): SetupNetworks creates them and their
// firewall rules and returns where the egress proxy listens; a provider
// without any returns no address. AllowProxy lets the sandboxes reach the
// proxy once it listens there, until revoke.
type Networker interface {
	SetupNetworks(ctx context.Context) (netip.AddrPort, error)
	AllowProxy(ctx context.Context) (revoke func(), err error)
}

// NetworkAddresser is implemented by Networkers that say what their
// egress networks hold: NetworkSubnets, which the egress guard closes, and
// SandboxAddrs, the addresses a sandbox sends from on them, to which its
// proxy credentials are bound.
type NetworkAddresser interface {
	NetworkSubnets(ctx context.Context) ([]netip.Prefix, error)
	SandboxAddrs(ctx context.Context, h Handle) ([]netip.Addr, error)
}

var (
	_ Provider         = (*Breaker)(nil)
	_ Lister           = (*Breaker)(nil)
	_ WorkspaceRemover = (*Breaker)(nil)
	_ Snapshotter      = (*Breaker)(nil)
	_ Sizer            = (*Breaker)(nil)
	_ ImageInspector   = (*Breaker)(nil)
	_ NetworkAddresser = (*Breaker)(nil)
	_ ImageChecker     = (*Breaker)(nil)
	_ AgentLogger      = (*Breaker)(nil)
	_ Relabeler        = (*Breaker)(nil)
	_ Networker        = (*Breaker)(nil)
	_ Grouper          = (*Breaker)(nil)
)

func (b *Breaker) Name() string               { return b.p.Name() }
func (b *Breaker) Capabilities() Capabilities { return b.p.Capabilities() }

func (b *Breaker) Create(ctx context.Context, spec Spec) (Handle, error) {
	return call(b, "create", func() (Handle, error) { return b.p.Create(ctx, spec) })
}

func (b *Breaker) Start(ctx context.Context, h Handle) error {
	return call0(b, "start", func() error { return b.p.Start(ctx, h) })
}

func (b *Breaker) Pause(ctx context.Context, h Handle) error {
	return call0(b, "pause", func() error { return b.p.Pause(ctx, h) })
}

func (b *Breaker) Resume(ctx context.Context, h Handle) error {
	return call0(b, "resume", func() error { return b.p.Resume(ctx, h) })
}

func (b *Breaker) Destroy(ctx context.Context, h Handle) error {
	return call0(b, "destroy", func() error { return b.p.Destroy(ctx, h) })
}

func (b *Breaker) Inspect(ctx context.Context, h Handle) (Status, error) {
	return call(b, "inspect", func() (Status, error) { return b.p.Inspect(ctx, h) })
}

func (b *Breaker) DialAgent(ctx context.Context, h Handle) (net.Conn, error) {
	return call(b, "dial_agent", func() (net.Conn, error) { return b.p.DialAgent(ctx, h) })
}

// Ping checks the backend through the breaker: while it is open, it
// answers at once with the failure that opened it.
func (b *Breaker) Ping(ctx context.Context) error {
	pg, ok := b.p.(pinger)
	if !ok {
		return nil
	}
	if err := b.Available(); err != nil {
		return err // open: the prober pings, not every readiness check
	}
	return call0(b, "ping", func() error { return pg.Ping(ctx) })
}

func (b *Breaker) List(ctx context.Context, instance string) ([]Listed, error) {
	l, ok := b.p.(Lister)
	if !ok {
		return nil, errdefs.NotImplemented("list_not_supported", "provider %s cannot list its compute", b.p.Name())
	}
	return call(b, "list", func() ([]Listed, error) { return l.List(ctx, instance) })
}

func (b *Breaker) RemoveWorkspace(ctx context.Context, name string) error {
	w, ok := b.p.(WorkspaceRemover)
	if !ok {
		return errdefs.NotImplemented("workspace_not_supported", "provider %s keeps no workspaces", b.p.Name())
	}
	return call0(b, "remove_workspace", func() error { return w.RemoveWorkspace(ctx, name) })
}

func (b *Breaker) Snapshot(ctx context.Context, h Handle, labels map[string]string) (string, error) {
	s, ok := b.p.(Snapshotter)
	if !ok {
		return "", errdefs.NotImplemented("snapshot_not_supported", "provider %s cannot snapshot compute", b.p.Name())
	}
	return call(b, "snapshot", func() (string, error) { return s.Snapshot(ctx, h, labels) })
}

func (b *Breaker) RemoveSnapshot(ctx context.Context, ref string) error {
	s, ok := b.p.(Snapshotter)
	if !ok {
		return nil // it never made one
	}
	return call0(b, "remove_snapshot", func() error { return s.RemoveSnapshot(ctx, ref) })
}

func (b *Breaker) IsSnapshot(ref string) bool {
	s, ok := b.p.(Snapshotter)
	return ok && s.IsSnapshot(ref)
}

// AgentLog returns the agent's own log, when the provider keeps one.
func (b *Breaker) AgentLog(ctx context.Context, h Handle, tail int) (string, error) {
	l, ok := b.p.(AgentLogger)
	if !ok {
		return "", errdefs.NotImplemented("agent_log_not_supported", "provider %s keeps no agent log", b.p.Name())
	}
	return call(b, "agent_log", func() (string, error) { return l.AgentLog(ctx, h, tail) })
}

// Capacity is the host's, or zero (unknown) for a provider that cannot
// tell.
func (b *Breaker) Capacity(ctx context.Context) (Resources, error) {
	s, ok := b.p.(Sizer)
	if !ok {
		return Resources{}, nil
	}
	return call(b, "capacity", func() (Resources, error) { return s.Capacity(ctx) })
}

// ImageLabels are an image's labels; a provider that cannot read them
// answers not implemented.
func (b *Breaker) ImageLabels(ctx context.Context, image string) (map[string]string, error) {
	in, ok := b.p.(ImageInspector)
	if !ok {
		return nil, errdefs.NotImplemented("image_labels_not_supported", "provider %s cannot read image labels", b.p.Name())
	}
	return call(b, "image_labels", func() (map[string]string, error) { return in.ImageLabels(ctx, image) })
}

// CheckImage tells whether the provider can run an image; a provider that
// cannot tell answers not implemented.
func (b *Breaker) CheckImage(ctx context.Context, image string) error {
	c, ok := b.p.(ImageChecker)
	if !ok {
		return errdefs.NotImplemented("check_image_not_supported", "provider %s cannot check images", b.p.Name())
	}
	return call0(b, "check_image", func() error { return c.CheckImage(ctx, image) })
}

// CodeRelabelNotSupported is the answer of Relabel for a provider whose
// compute's labels are fixed (a Docker container's).
const CodeRelabelNotSupported = "relabel_not_supported"

// Relabel sets labels on existing compute; a provider whose labels are
// fixed answers not implemented (CodeRelabelNotSupported).
func (b *Breaker) Relabel(ctx context.Context, h Handle, labels map[string]string) error {
	r, ok := b.p.(Relabeler)
	if !ok {
		return errdefs.NotImplemented(CodeRelabelNotSupported, "provider %s cannot change the labels of its compute", b.p.Name())
	}
	return call0(b, "relabel", func() error { return r.Relabel(ctx, h, labels) })
}

// SetupNetworks sets up the provider's egress networks; a provider without
// any returns no address.
func (b *Breaker) SetupNetworks(ctx context.Context) (netip.AddrPort, error) {
	n, ok := b.p.(Networker)
	if !ok {
		return netip.AddrPort{}, nil
	}
	return call(b, "setup_networks", func() (netip.AddrPort, error) { return n.SetupNetworks(ctx) })
}

// NetworkSubnets returns the subnets of the provider's egress networks;
// a provider without any returns none.
func (b *Breaker) NetworkSubnets(ctx context.Context) ([]netip.Prefix, error) {
	n, ok := b.p.(NetworkAddresser)
	if !ok {
		return nil, nil
	}
	return call(b, "network_subnets", func() ([]netip.Prefix, error) { return n.NetworkSubnets(ctx) })
}

// SandboxAddrs returns the addresses sandbox h has on the provider's
// egress networks.
func (b *Breaker) SandboxAddrs(ctx context.Context, h Handle) ([]netip.Addr, error) {
	n, ok := b.p.(NetworkAddresser)
	if !ok {
		return nil, errdefs.NotImplemented("network_addresses_not_supported", "provider %s has no egress networks", b.p.Name())
	}
	return call(b, "sandbox_addrs", func() ([]netip.Addr, error) { return n.SandboxAddrs(ctx, h) })
}

// AllowProxy lets the provider's sandboxes reach the egress proxy; a
// provider without networks has nothing to allow.
func (b *Breaker) AllowProxy(ctx context.Context) (func(), error) {
	n, ok := b.p.(Networker)
	if !ok {
		return func() {}, nil
	}
	return call(b, "allow_proxy", func() (func(), error) { return n.AllowProxy(ctx) })
}

// grouper is the guarded provider as a Grouper, or world_not_supported.
func (b *Breaker) grouper() (Grouper, error) {
	g, ok := b.p.(Grouper)
	if !ok {
		return nil, errdefs.FailedPrecondition("world_not_supported", "provider %s cannot put a world's members on a private network of their own", b.p.Name())
	}
	return g, nil
}

func (b *Breaker) CreateGroup(ctx context.Context, id string) error {
	g, err := b.grouper()
	if err != nil {
		return err
	}
	return call0(b, "create_group", func() error { return g.CreateGroup(ctx, id) })
}

func (b *Breaker) RemoveGroup(ctx context.Context, id string) error {
	g, err := b.grouper()
	if err != nil {
		return err
	}
	return call0(b, "remove_group", func() error { return g.RemoveGroup(ctx, id) })
}

func (b *Breaker) Groups(ctx context.Context) ([]string, error) {
	g, err := b.grouper()
	if err != nil {
		return nil, err
	}
	return call(b, "groups", func() ([]string, error) { return g.Groups(ctx) })
}
