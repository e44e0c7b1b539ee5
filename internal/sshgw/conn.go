package sshgw

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// conn is one client connection: its handshake, its channels, and the
// periodic check that its key still grants access.
type conn struct {
	g      *Gateway
	nc     net.Conn
	client string // the client's address, for logs
	ctx    context.Context
	cancel context.CancelFunc

	grant grant
	sc    *ssh.ServerConn
	// release gives the connection's place among its user's back; nil
	// until it is admitted.
	release func()

	mu       sync.Mutex
	sessions int
	forwards int
	channels sync.WaitGroup
	// addr is the client's address without its port; pending is true
	// until the handshake ends (guarded by the gateway's mu).
	addr    string
	pending bool
}

func (c *conn) serve() {
	defer c.g.untrack(c)
	defer c.cancel()
	defer c.nc.Close()
	stop := context.AfterFunc(c.ctx, func() { c.nc.Close() })
	defer stop()

	_ = c.nc.SetDeadline(time.Now().Add(c.g.cfg.HandshakeTimeout))
	hc := &quickAck{Conn: c.nc}
	sc, chans, reqs, err := ssh.NewServerConn(hc, c.g.ssh)
	hc.done.Store(true)
	c.g.handshaken(c)
	if err != nil {
		// Scanners, refused keys (logged by publicKey), dropped links.
		c.g.logger.Debug("ssh handshake failed", "client", c.client, "err", err)
		return
	}
	_ = c.nc.SetDeadline(time.Time{})
	c.sc = sc
	gr := grantOf(sc.Permissions)
	release, ok := c.g.admit(c.ctx, gr.userID)
	if !ok {
		c.g.logger.Warn("ssh connection refused: too many connections for the user", "client", c.client, "user_id", gr.userID)
		sc.Close()
		return
	}
	c.grant, c.release = gr, release
	start := time.Now()
	log := c.g.logger.With("client", c.client, "user_id", gr.userID, "runtime", gr.runtimeID, "fingerprint", gr.fingerprint)
	log.Info("ssh connection opened")

	var wg sync.WaitGroup
	wg.Go(func() {
		// Global requests: keepalives answer false, as OpenSSH expects of
		// a server that knows none; remote forwarding (tcpip-forward) is
		// refused the same way.
		ssh.DiscardRequests(reqs)
	})
	wg.Go(func() { c.recheck(log) })
	for nc := range chans {
		c.open(nc)
	}
	// The connection is gone: end what is left of its channels.
	c.cancel()
	c.channels.Wait()
	wg.Wait()
	log.Info("ssh connection closed", "duration", time.Since(start).Round(time.Millisecond))
}

// open starts a channel the client asked for, or refuses it.
func (c *conn) open(nc ssh.NewChannel) {
	switch nc.ChannelType() {
	case "session":
		if !c.take(&c.sessions, MaxSessionsPerConn) {
			_ = nc.Reject(ssh.ResourceShortage, "too many sessions on this connection")
			return
		}
		c.channels.Go(func() {
			defer c.give(&c.sessions)
			c.session(nc)
		})
	case "direct-tcpip":
		if !c.take(&c.forwards, MaxForwardsPerConn) {
			_ = nc.Reject(ssh.ResourceShortage, "too many forwarded connections on this connection")
			return
		}
		c.channels.Go(func() {
			defer c.give(&c.forwards)
			c.forward(nc)
		})
	default:
		_ = nc.Reject(ssh.UnknownChannelType, "paddock opens sessions and forwards to ports inside the sandbox only")
	}
}

func (c *conn) take(n *int, limit int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if *n >= limit {
		return false
	}
	*n++
	return true
}

func (c *conn) give(n *int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*n--
}

// recheck decides again, every Recheck, whether the connection's key still
// grants access to its runtime; once it does not (the key was deleted, the
// user lost the role or the workspace), the connection is closed.
func (c *conn) recheck(log *slog.Logger) {
	t := time.NewTicker(c.g.cfg.Recheck)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		why, err := c.g.reauthorize(c.ctx, c.grant)
		switch {
		case c.ctx.Err() != nil:
			return
		case err != nil:
			// A store that does not answer ends nothing; the next round
			// decides.
			log.Error("ssh access recheck", "err", err)
		case why != "":
			log.Info("ssh connection ended: access withdrawn", "reason", string(why))
			c.cancel()
			return
		}
	}
}
