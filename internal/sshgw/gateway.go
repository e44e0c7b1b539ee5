// Package sshgw is the SSH gateway built into the paddock server: `ssh -p
// 2222 <runtime>@<host>` opens a shell in a runtime's sandbox through the
// in-sandbox agent, so a sandbox needs neither a network nor an sshd.
//
// A client authenticates with a public key its user registered (auth.go);
// the user name names the runtime. On a connection it may open:
//
//   - sessions (session.go): a shell on a PTY (the agent's terminal), a
//     shell or a command with pipes (the agent's exec), with the real exit
//     status; and the sftp subsystem (sftp.go), served here from the
//     agent's file calls, which scp uses too;
//   - direct-tcpip channels (forward.go), `ssh -L`, to ports on the
//     sandbox's loopback through the agent.
//
// Remote forwarding, agent forwarding and X11 are refused. Each channel
// reaches the agent through runtime.Service.AgentOf, which wakes a paused
// or archived runtime and counts the runtime as active for as long as the
// channel is open.
package sshgw

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/clientaddr"
	"github.com/paddockhq/paddock/internal/runtime"
)

// Defaults of Config's zero fields.
const (
	DefaultMaxFileBytes     = 1 << 30
	DefaultMaxSpoolBytes    = 8 << 30
	DefaultRecheck          = 30 * time.Second
	DefaultHandshakeTimeout = 30 * time.Second
	DefaultMaxConns         = 1024
	DefaultMaxConnsPerUser  = 32
	// MaxSessionsPerConn is how many session channels one connection may
	// have open at once (OpenSSH's MaxSessions); MaxForwardsPerConn the
	// same for forwarded connections.
	MaxSessionsPerConn = 10
	MaxForwardsPerConn = 64
)

// Config wires a Gateway.
type Config struct {
	Runtimes *runtime.Service
	HostKey  ssh.Signer
	Logger   *slog.Logger
	// MaxFileBytes bounds one file moved over SFTP, which the gateway
	// spools in a temporary file; 0 means 1 GiB.
	MaxFileBytes int64
	// SpoolDir holds the spool files (unlinked as soon as they are made);
	// "" means the system's temporary directory. MaxSpoolBytes bounds
	// what they hold together, across connections; 0 means 8 GiB.
	SpoolDir      string
	MaxSpoolBytes int64
	// Recheck is how often an open connection's key and access are
	// checked again (a deleted key, a removed member end it); 0 means 30s.
	Recheck time.Duration
	// HandshakeTimeout bounds a connection's key exchange and
	// authentication; 0 means 30s.
	HandshakeTimeout time.Duration
	// MaxConns and MaxConnsPerUser bound open connections; 0 means 1024
	// and 32.
	MaxConns        int
	MaxConnsPerUser int
	// Users, when set, counts each user's connections against
	// MaxConnsPerUser in place of the gateway's own count: where replicas
	// share the count, so that the cap holds across them.
	Users UserCounter
	// Access decides who may connect: the access service every door
	// asks. Required.
	Access *iam.Service
}

// Gateway serves SSH. It is safe for concurrent use.
type Gateway struct {
	cfg Config
	// path resolves, authorizes, wakes and dials runtimes, as every
	// door does.
	path   iam.Path
	logger *slog.Logger
	ssh    *ssh.ServerConfig
	// spooled is how many bytes the SFTP spool files hold (sftp.go).
	spooled atomic.Int64

	// ctx is the parent of every connection's; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	perUser   map[string]int
	// pending counts the connections of each client address that have
	// not authenticated yet (maxPendingPerAddr).
	pending map[string]int
	wg      sync.WaitGroup // connections
}

// UserCounter counts users' open connections across gateways (see
// Config.Users).
type UserCounter interface {
	// TakeUser takes one of userID's max places and returns the func that
	// gives it back, or reports that none is left.
	TakeUser(ctx context.Context, userID string, max int) (release func(), ok bool, err error)
}

// ErrClosed is returned by Serve once the gateway is closed.
var ErrClosed = errors.New("sshgw: gateway closed")

// New returns a Gateway; Serve serves it on a listener. cfg.Access must
// be set.
func New(cfg Config) *Gateway {
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if cfg.MaxSpoolBytes <= 0 {
		cfg.MaxSpoolBytes = DefaultMaxSpoolBytes
	}
	if cfg.Recheck <= 0 {
		cfg.Recheck = DefaultRecheck
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxConnsPerUser <= 0 {
		cfg.MaxConnsPerUser = DefaultMaxConnsPerUser
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Access == nil {
		panic("sshgw: Config.Access is required")
	}
	g := &Gateway{
		cfg:       cfg,
		path:      iam.Path{Access: cfg.Access, Agents: cfg.Runtimes},
		logger:    cfg.Logger.With("component", "ssh"),
		listeners: map[net.Listener]struct{}{},
		conns:     map[*conn]struct{}{},
		perUser:   map[string]int{},
		pending:   map[string]int{},
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.ssh = &ssh.ServerConfig{
		ServerVersion:     "SSH-2.0-paddock",
		PublicKeyCallback: g.publicKey,
	}
	g.ssh.AddHostKey(cfg.HostKey)
	return g
}

// Serve accepts connections on ln until ln fails or the gateway is
// closed (ErrClosed). It closes ln when it returns.
func (g *Gateway) Serve(ln net.Listener) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		ln.Close()
		return ErrClosed
	}
	g.listeners[ln] = struct{}{}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.listeners, ln)
		g.mu.Unlock()
		ln.Close()
	}()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if g.isClosed() {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: back off, as
				// net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				g.logger.Warn("ssh accept", "err", err, "retry_in", delay)
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("sshgw: accept: %w", err)
		}
		delay = 0
		c, ok := g.track(nc)
		if !ok {
			nc.Close()
			continue
		}
		go c.serve()
	}
}

func (g *Gateway) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// track registers a new connection, unless the gateway is closed or full.
func (g *Gateway) track(nc net.Conn) (*conn, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, false
	}
	if len(g.conns) >= g.cfg.MaxConns {
		g.logger.Warn("ssh connection refused: too many connections", "client", nc.RemoteAddr().String(), "max", g.cfg.MaxConns)
		return nil, false
	}
	// An IPv6 client counts by its /64, as in the API's rate limits.
	addr := clientaddr.Key(clientaddr.Peer(nc.RemoteAddr().String()))
	if g.pending[addr] >= maxPendingPerAddr {
		// One address holding many handshakes open would keep everyone
		// else out for the handshake timeout.
		g.logger.Warn("ssh connection refused: too many unauthenticated connections from the address", "client", nc.RemoteAddr().String(), "max", maxPendingPerAddr)
		return nil, false
	}
	g.pending[addr]++
	ctx, cancel := context.WithCancel(g.ctx)
	c := &conn{g: g, nc: nc, ctx: ctx, cancel: cancel, client: nc.RemoteAddr().String(), addr: addr, pending: true}
	g.conns[c] = struct{}{}
	g.wg.Add(1)
	return c, true
}

// maxPendingPerAddr bounds the connections one client address may have
// in the handshake at once.
const maxPendingPerAddr = 16

// handshaken marks c as past its handshake: its address's count of
// pending connections drops.
func (g *Gateway) handshaken(c *conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.settle(c)
}

func (g *Gateway) settle(c *conn) {
	if !c.pending {
		return
	}
	c.pending = false
	if g.pending[c.addr]--; g.pending[c.addr] <= 0 {
		delete(g.pending, c.addr)
	}
}

// admit counts an authenticated connection against its user's limit,
// in Config.Users when set; release gives its place back. A count that
// fails refuses the connection.
func (g *Gateway) admit(ctx context.Context, userID string) (release func(), ok bool) {
	if g.cfg.Users != nil {
		release, ok, err := g.cfg.Users.TakeUser(ctx, userID, g.cfg.MaxConnsPerUser)
		if err != nil {
			g.logger.Warn("ssh connection refused: its user's connections could not be counted", "user_id", userID, "err", err)
		}
		return release, ok && err == nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.perUser[userID] >= g.cfg.MaxConnsPerUser {
		return nil, false
	}
	g.perUser[userID]++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.perUser[userID]--; g.perUser[userID] <= 0 {
			delete(g.perUser, userID)
		}
	}, true
}

// untrack forgets a connection that ended, and gives its user's place
// back.
func (g *Gateway) untrack(c *conn) {
	if c.release != nil {
		c.release()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.settle(c)
	delete(g.conns, c)
	g.wg.Done()
}

// Shutdown stops accepting connections, lets open ones end by themselves
// until ctx ends, then closes what is left (Close). It returns once every
// connection has ended.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	for ln := range g.listeners {
		ln.Close()
	}
	g.mu.Unlock()
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		g.cancel()
		return nil
	case <-ctx.Done():
	}
	return g.Close()
}

// Close stops accepting connections and ends every open one with its
// sessions, forwards and transfers; it returns once they have ended.
func (g *Gateway) Close() error {
	g.mu.Lock()
	g.closed = true
	for ln := range g.listeners {
		ln.Close()
	}
	g.mu.Unlock()
	g.cancel()
	g.wg.Wait()
	return nil
}

// publicKey decides whether a key may authenticate a user name; the
// client learns only yes or no. A refusal is logged once per key and
// connection (the ssh package caches the answer).
func (g *Gateway) publicKey(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	ctx, cancel := context.WithTimeout(g.ctx, 10*time.Second)
	defer cancel()
	fp := ssh.FingerprintSHA256(key)
	gr, why, err := g.authorize(ctx, meta.User(), fp, AuthorizedKey(key))
	if why != "" || err != nil {
		attrs := []any{"client", meta.RemoteAddr().String(), "user", truncate(meta.User(), 64), "fingerprint", fp, "reason", string(why)}
		if err != nil {
			attrs = append(attrs, "err", err)
			g.logger.Error("ssh authentication failed", attrs...)
		} else {
			g.logger.Info("ssh authentication failed", attrs...)
		}
		return nil, errRefused
	}
	return gr.permissions(), nil
}

// agentOf returns the agent of a connection's runtime, waking it if it is
// paused or archived; the runtime counts as active until ctx ends.
func (g *Gateway) agentOf(ctx context.Context, runtimeID string) (*agentconn.Client, error) {
	rt, err := g.path.Resolve(ctx, runtimeID)
	if err != nil {
		return nil, err
	}
	return g.path.Dial(ctx, rt)
}
