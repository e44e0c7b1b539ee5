package sshgw

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"

	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Local forwarding (`ssh -L`): a direct-tcpip channel to a port on the
// sandbox's loopback, connected through the agent (DialPort), so the
// sandbox needs no network. Only "localhost", "127.0.0.1" and "::1" are
// destinations: the gateway is not a way onto any other network, the
// server's included.

// directTCPIP is RFC 4254's direct-tcpip open request.
type directTCPIP struct {
	Host       string
	Port       uint32
	OriginHost string
	OriginPort uint32
}

// loopbackHosts are the destinations a forward may name.
var loopbackHosts = map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, "[::1]": true}

func (c *conn) forward(nc ssh.NewChannel) {
	var req directTCPIP
	if err := ssh.Unmarshal(nc.ExtraData(), &req); err != nil {
		_ = nc.Reject(ssh.ConnectionFailed, "malformed direct-tcpip request")
		return
	}
	if !loopbackHosts[req.Host] || req.Port < 1 || req.Port > 65535 {
		c.g.logger.Info("ssh forward refused", "client", c.client, "runtime", c.grant.runtimeID, "host", truncate(req.Host, 255), "port", req.Port)
		_ = nc.Reject(ssh.Prohibited, "only ports inside the sandbox can be forwarded: use localhost:<port>")
		return
	}
	// The channel's context keeps the runtime active while the forwarded
	// connection is open.
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	agent, err := c.g.agentOf(ctx, c.grant.runtimeID)
	var pc net.Conn
	if err == nil {
		pc, err = agent.DialPort(ctx, int(req.Port))
	}
	if err != nil {
		msg := errdefs.PublicMessage(err, "the connection to the sandbox's agent failed")
		_ = nc.Reject(ssh.ConnectionFailed, msg)
		return
	}
	defer pc.Close()
	ch, reqs, err := nc.Accept()
	if err != nil {
		return
	}
	defer ch.Close()
	c.channels.Go(func() { ssh.DiscardRequests(reqs) }) // ends when the channel closes
	stop := context.AfterFunc(ctx, func() {
		ch.Close()
		pc.Close()
	})
	defer stop()
	splice(ch, pc)
}

// splice copies both ways between a channel and a connection, passing
// each side's end-of-file on as a half-close, until both directions end
// or one fails.
func splice(ch ssh.Channel, pc net.Conn) {
	var wg sync.WaitGroup
	fail := sync.OnceFunc(func() {
		ch.Close()
		pc.Close()
	})
	wg.Go(func() {
		if _, err := io.Copy(pc, ch); err != nil {
			fail()
			return
		}
		if cw, ok := pc.(interface{ CloseWrite() error }); ok {
			if err := cw.CloseWrite(); err != nil && !errors.Is(err, net.ErrClosed) {
				fail()
			}
			return
		}
		fail()
	})
	wg.Go(func() {
		if _, err := io.Copy(ch, pc); err != nil {
			fail()
			return
		}
		_ = ch.CloseWrite()
	})
	wg.Wait()
}
