package runtime

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// Public error codes of operations inside a runtime (exec, files,
// terminals).
const (
	CodeNotRunning        = "runtime_not_running"
	CodePaused            = "runtime_paused"
	CodeAgentNotSupported = "agent_not_supported"
	CodeShuttingDown      = "shutting_down"
)

// Agent resolves the agent of a runtime: the one place every operation
// inside a sandbox (exec, files, terminals) passes through. It checks that
// the runtime is running and returns a client of its current sandbox's
// agent, cached per runtime: one HTTP/2 connection multiplexes all calls.
//
//   - paused or archived: woken first (resumed, or restored from its
//     snapshot), holding the request until it runs — the caller sees a
//     slower call, not an error. Concurrent operations wake it once. A
//     wake the org cannot pay for answers 402 like a resume would;
//   - idle or error: 409 runtime_not_running ("start it first");
//   - starting: 409 runtime_busy.
//
// Every call is activity: it extends the sandbox's expiry window, and the
// runtime counts as active until ctx ends (see activity.go), so a stream
// the client stays attached to keeps it from expiring.
//
// The runtime returned is the one the check was made on.
func (s *Service) Agent(ctx context.Context, runtimeID string) (*agentconn.Client, store.Runtime, error) {
	rt, err := s.store.GetRuntime(ctx, runtimeID)
	if err != nil {
		return nil, rt, err
	}
	return s.AgentOf(ctx, rt)
}

// AgentOf is Agent for a runtime the caller has just read.
func (s *Service) AgentOf(ctx context.Context, rt store.Runtime) (*agentconn.Client, store.Runtime, error) {
	if err := s.pending.check(ctx, rt.ID); err != nil {
		return nil, rt, err
	}
	var err error
	if rt.Status == store.RuntimePaused || rt.Status == store.RuntimeArchived {
		if rt, err = s.wake(ctx, rt.ID); err != nil {
			return nil, rt, err
		}
	}
	if rt.Status != store.RuntimeRunning || rt.CurrentSandboxID == "" {
		return nil, rt, agentStatus(s.name(ctx, rt), rt)
	}
	sb, err := s.store.GetSandbox(ctx, rt.CurrentSandboxID)
	if errdefs.IsNotFound(err) || (err == nil && sb.State != store.SandboxRunning) {
		// The row moved under us (a concurrent action): say so plainly.
		return nil, rt, errdefs.Conflict(CodeBusy, "runtime %s is changing state; try again", rt.ID)
	}
	if err != nil {
		return nil, rt, err
	}
	p, err := s.providers.Get(sb.Provider)
	if err != nil {
		return nil, rt, err
	}
	if !p.Capabilities().Agent {
		return nil, rt, errdefs.NotImplemented(CodeAgentNotSupported, "provider %s does not run the sandbox agent: exec, files and terminals are not available", p.Name())
	}
	c, err := s.agents.get(ctx, rt.ID, sb, p)
	if err != nil {
		return nil, rt, err
	}
	s.touch(ctx, rt, sb)
	return c, rt, nil
}

// agentStatus explains why a runtime in rt's status has no agent to talk
// to, naming it name, or returns nil when it is running.
func agentStatus(name string, rt store.Runtime) error {
	switch rt.Status {
	case store.RuntimeRunning:
		if rt.CurrentSandboxID == "" {
			return errdefs.Conflict(CodeBusy, "runtime %s is changing state; try again", name)
		}
		return nil
	case store.RuntimePaused:
		return errdefs.Conflict(CodePaused, "runtime %s is paused; resume it first", name)
	case store.RuntimeStarting:
		return errdefs.Conflict(CodeBusy, "runtime %s is starting; try again when it is running", name)
	case store.RuntimeError:
		return errdefs.Conflict(CodeNotRunning, "runtime %s is in error (%s); reset it, then start it first", name, rt.StatusReason)
	}
	return errdefs.Conflict(CodeNotRunning, "runtime %s is %s, not running; start it first", name, rt.Status)
}

// CloseAgents closes every cached agent connection, ending the calls still
// in flight on them, and makes later Agent calls fail with 503
// shutting_down. Everything else goes on: actions still run and their
// events still reach the subscribers. The server calls it while it drains,
// to end the streams to sandbox agents that would not end by themselves.
func (s *Service) CloseAgents() {
	s.agents.close()
}

// Close is CloseAgents, and then ends every event subscription (see
// Subscribe). The server calls it when the runtime component closes, after
// the components that act on runtimes.
func (s *Service) Close() error {
	s.CloseAgents()
	s.subs.close()
	return nil
}

// forgetAgent drops the cached agent client of a runtime's sandbox, closing
// its connections; called when the sandbox is destroyed.
func (s *Service) forgetAgent(runtimeID, sandboxID string) {
	s.agents.forget(runtimeID, sandboxID)
}

// agentPool caches one agent client per runtime, for the runtime's current
// sandbox. It owns the connections the clients dial, so it can end them:
// when the sandbox changes or is destroyed, and on close.
type agentPool struct {
	mu      sync.Mutex
	entries map[string]*agentEntry // by runtime id
	closed  bool
	// env, when set, returns the environment a sandbox's agent injects
	// into its processes (secrets, egress settings); see env.go.
	env func(ctx context.Context, sb store.Sandbox) (map[string]string, error)
	// metrics counts links opened again after one broke.
	metrics *metrics.Metrics
}

// agentEntry is the client of one sandbox's agent and its connections.
type agentEntry struct {
	sandboxID  string
	providerID string
	client     *agentconn.Client
	// adopting, while a claim sends the runtime's environment over this
	// link (adopt), is closed when it is through; guarded by the pool's mu.
	adopting chan struct{}
	// sb is the ledger row whose environment new connections send: a
	// warm sandbox's stand-in until a runtime claims it.
	sb atomic.Pointer[store.Sandbox]

	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	closed bool
}

func newAgentPool() *agentPool {
	return &agentPool{entries: map[string]*agentEntry{}}
}

var errAgentClosed = errors.New("agent client closed")

// get returns the client of key's sandbox sb. While a claim still sends
// the runtime's environment over the link it adopted (adopt), it waits for
// that first, or for ctx: no process may start with the warm sandbox's
// stand-in environment.
func (p *agentPool) get(ctx context.Context, key string, sb store.Sandbox, prov provider.Provider) (*agentconn.Client, error) {
	for {
		c, adopting, err := p.entry(key, sb, prov)
		if adopting == nil {
			return c, err
		}
		select {
		case <-adopting:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// entry is get without the wait: the client, or the adoption to wait for
// before asking again.
func (p *agentPool) entry(runtimeID string, sb store.Sandbox, prov provider.Provider) (*agentconn.Client, <-chan struct{}, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, errdefs.Unavailable(CodeShuttingDown, "the server is shutting down")
	}
	if e, ok := p.entries[runtimeID]; ok {
		if e.sandboxID == sb.ID && e.providerID == sb.ProviderSandboxID {
			if e.adopting != nil {
				return nil, e.adopting, nil
			}
			return e.client, nil, nil
		}
		// The runtime has another sandbox now.
		delete(p.entries, runtimeID)
		e.close()
	}
	h := handleOf(sb)
	e := &agentEntry{sandboxID: sb.ID, providerID: sb.ProviderSandboxID, conns: map[*trackedConn]struct{}{}}
	e.sb.Store(&sb)
	env, m := p.env, p.metrics
	dial := func(ctx context.Context) (net.Conn, error) {
		c, err := prov.DialAgent(ctx, h)
		if err != nil {
			return nil, err
		}
		return e.track(c)
	}
	// A large write's connection of its own needs no environment. Exec's
	// framed connections are dialed the same way, and a process starts on
	// one only once the agent has its environment.
	opts := []agentconn.Option{agentconn.WithBytesDial(dial)}
	if env != nil {
		opts = append(opts, agentconn.WithEnvRequired())
	}
	var dials atomic.Int64
	e.client = agentconn.New(func(ctx context.Context) (net.Conn, error) {
		if dials.Add(1) > 1 {
			m.AgentReconnect() // the client dials again only when its link broke
		}
		if env != nil {
			if err := configureAgent(ctx, prov, h, *e.sb.Load(), env); err != nil {
				return nil, err
			}
		}
		return dial(ctx)
	}, opts...)
	p.entries[runtimeID] = e
	return e.client, nil, nil
}

// configureAgent sends the sandbox's injected environment to its agent
// over a connection of its own, before the connection calls will use is
// dialed. Every new connection does this, so an agent that restarted (and
// lost the environment it keeps only in memory) has it again before any
// process starts.
func configureAgent(ctx context.Context, prov provider.Provider, h provider.Handle, sb store.Sandbox, envFor func(context.Context, store.Sandbox) (map[string]string, error)) error {
	env, err := envFor(ctx, sb)
	if err != nil {
		return err
	}
	c, err := prov.DialAgent(ctx, h)
	if err != nil {
		return err
	}
	once := agentconn.New(func(context.Context) (net.Conn, error) {
		if c == nil {
			return nil, errAgentClosed
		}
		conn := c
		c = nil
		return conn, nil
	})
	defer func() {
		_ = once.Close()
		if c != nil {
			_ = c.Close()
		}
	}()
	return once.SetEnv(ctx, env)
}

// warmLink is the pool key of a warm sandbox's agent link until a runtime
// claims it.
func warmLink(warmID string) string { return "warm/" + warmID }

// prewarm opens the link to a running warm sandbox's agent (its first
// connection answers a health check) ahead of any claim, and has the agent
// run one process: an agent's first spawn costs about 1 ms more than the
// ones after it, which the claim's first exec would otherwise pay.
func (p *agentPool) prewarm(ctx context.Context, warmID string, h provider.Handle, prov provider.Provider) error {
	c, err := p.get(ctx, warmLink(warmID), store.Sandbox{ID: warmID, ProviderSandboxID: h.ID, ProviderState: h.State}, prov)
	if err != nil {
		return err
	}
	if err := c.Health(ctx); err != nil {
		return err
	}
	// An image without true still warms the agent's side of a spawn; how
	// the process ended does not matter.
	_, _ = c.Run(ctx, agentconn.ExecRequest{Argv: []string{"true"}, Timeout: warmupTimeout})
	return nil
}

// warmupTimeout bounds prewarm's process.
const warmupTimeout = 5 * time.Second

// adopt gives runtimeID the open link of the warm sandbox it claimed, now
// its sandbox sb (a link's later connections configure themselves, as any
// runtime's do), and returns what sends the runtime's environment over it,
// nil when there is nothing to send: without a prewarmed link the first
// call dials as usual. Until send has returned, calls on the link wait
// (get). Should the agent not take the environment, the link is dropped,
// and the next call dials a link of its own, which configures the agent
// first; send's error says so. A link forgotten meanwhile is no error.
func (p *agentPool) adopt(warmID, runtimeID string, sb store.Sandbox) (send func(context.Context) error) {
	e, adopting := p.take(warmID, runtimeID, sb)
	if adopting == nil {
		return nil
	}
	env := p.env
	return func(ctx context.Context) error {
		vars, err := env(ctx, sb)
		if err == nil && len(vars) > 0 {
			err = e.client.SetEnv(ctx, vars)
		}
		p.mu.Lock()
		e.adopting = nil
		current := p.entries[runtimeID] == e
		dropped := err != nil && current
		if dropped {
			delete(p.entries, runtimeID)
		}
		p.mu.Unlock()
		if dropped {
			e.close()
		}
		close(adopting)
		if !current {
			// The link was forgotten or replaced meanwhile (a stop, a
			// delete, another sandbox), which ended the call: nothing
			// is left to configure.
			return nil
		}
		return err
	}
}

// take moves warm sandbox warmID's link to runtimeID, for adopt, and
// returns it with the channel its adoption closes, or a nil channel when
// there is nothing to send over it.
func (p *agentPool) take(warmID, runtimeID string, sb store.Sandbox) (*agentEntry, chan struct{}) {
	p.mu.Lock()
	e, ok := p.entries[warmLink(warmID)]
	if !ok {
		p.mu.Unlock()
		return nil, nil
	}
	delete(p.entries, warmLink(warmID))
	old, had := p.entries[runtimeID]
	if had && old.sandboxID == sb.ID && old.providerID == sb.ProviderSandboxID {
		// A call on the runtime, once its row said running, came first
		// and dialed a link of its own, which configured the agent: the
		// warm one is not needed.
		p.mu.Unlock()
		e.close()
		return nil, nil
	}
	e.sb.Store(&sb)
	p.entries[runtimeID] = e
	var adopting chan struct{}
	if p.env != nil {
		adopting = make(chan struct{})
		e.adopting = adopting
	}
	p.mu.Unlock()
	if had {
		old.close()
	}
	return e, adopting
}

func (p *agentPool) forget(runtimeID, sandboxID string) {
	p.mu.Lock()
	e, ok := p.entries[runtimeID]
	if ok && (sandboxID == "" || e.sandboxID == sandboxID) {
		delete(p.entries, runtimeID)
	} else {
		e = nil
	}
	p.mu.Unlock()
	if e != nil {
		e.close()
	}
}

func (p *agentPool) close() {
	p.mu.Lock()
	entries := p.entries
	p.entries = map[string]*agentEntry{}
	p.closed = true
	p.mu.Unlock()
	for _, e := range entries {
		e.close()
	}
}

// track records a connection the client dialed, refusing it once the
// entry is closed.
func (e *agentEntry) track(c net.Conn) (net.Conn, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		_ = c.Close()
		return nil, errdefs.Unavailable("agent_unavailable", "the sandbox's agent connection was closed").WithCause(errAgentClosed)
	}
	tc := &trackedConn{Conn: c, e: e}
	e.conns[tc] = struct{}{}
	return tc, nil
}

// close ends the entry's connections; calls in flight on them fail.
func (e *agentEntry) close() {
	_ = e.client.Close()
	e.mu.Lock()
	e.closed = true
	conns := make([]*trackedConn, 0, len(e.conns))
	for c := range e.conns {
		conns = append(conns, c)
	}
	e.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// trackedConn removes itself from its entry when closed.
type trackedConn struct {
	net.Conn
	e    *agentEntry
	once sync.Once
}

// Unwrap is the connection c tracks: the agent client looks at its socket
// between calls (agentconn.Unwrapper).
func (c *trackedConn) Unwrap() net.Conn { return c.Conn }

var _ agentconn.Unwrapper = (*trackedConn)(nil)

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.e.mu.Lock()
		delete(c.e.conns, c)
		c.e.mu.Unlock()
	})
	return c.Conn.Close()
}

// AgentLog returns the last tail lines the agent of sb wrote itself, as
// its provider keeps them. A sandbox whose compute is gone has none
// (ErrNotFound).
func (s *Service) AgentLog(ctx context.Context, sb store.Sandbox, tail int) (string, error) {
	if sb.ProviderSandboxID == "" {
		return "", errdefs.NotFound("sandbox_not_provisioned", "sandbox %s never had compute", sb.ID)
	}
	p, err := s.providers.Get(sb.Provider)
	if err != nil {
		return "", err
	}
	l, ok := p.(provider.AgentLogger)
	if !ok {
		return "", errdefs.NotImplemented("agent_log_not_supported", "provider %s keeps no agent log", p.Name())
	}
	return l.AgentLog(ctx, handleOf(sb), tail)
}
