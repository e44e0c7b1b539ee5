package sshgw

import (
	"net"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// quickAck acknowledges what it reads at once (TCP_QUICKACK) until done.
//
// The handshake is a ping-pong of small packets. A client whose previous
// packet is not acknowledged yet holds its next one back (Nagle's
// algorithm; OpenSSH's client sets TCP_NODELAY only once a session is
// interactive), and Linux delays the acknowledgement up to 40 ms when it
// has nothing to send along: twice per handshake, 80 ms of a connection
// that otherwise takes a few. Quick acknowledgements are a per-read
// setting on Linux, so it is set again after every read.
type quickAck struct {
	net.Conn
	done atomic.Bool
}

func (c *quickAck) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done.Load() {
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			if rc, err := tc.SyscallConn(); err == nil {
				_ = rc.Control(func(fd uintptr) {
					_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
				})
			}
		}
	}
	return n, err
}
