package agentconn

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

// wrapped is a provider's connection around the agent's socket.
type wrapped struct{ net.Conn }

func (w wrapped) Unwrap() net.Conn { return w.Conn }

// TestKeptQuiet: a kept connection looked at without reading is quiet
// while the agent says nothing, closed once the agent closes it, and unfit
// once the agent sends anything, all without a byte taken from it; the
// socket is found through a provider's wrapper, on unix and TCP, and not
// under TLS or another library's stream.
func TestKeptQuiet(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "unix" {
				addr = t.TempDir() + "/s"
			}
			l, err := net.Listen(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			pair := func() (*execConn, net.Conn) {
				t.Helper()
				c, err := net.Dial(network, l.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				agent, err := l.Accept()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close(); agent.Close() })
				ec := &execConn{conn: wrapped{c}, br: bufio.NewReader(wrapped{c}), raw: rawSocket(wrapped{c})}
				if ec.raw == nil {
					t.Fatalf("no socket found under a %s connection's wrapper", network)
				}
				return ec, agent
			}

			ec, agent := pair()
			if err := ec.quiet(); err != nil {
				t.Fatalf("an idle connection: %v", err)
			}
			if _, err := agent.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			// The byte may take a moment over TCP; until it comes the
			// connection is quiet.
			testenv.WaitFor(t, "the agent's byte", func() bool { return ec.quiet() != nil })
			if err := ec.quiet(); !errors.Is(err, errOutOfTurn) {
				t.Fatalf("after the agent spoke: %v", err)
			}
			if b, err := ec.br.ReadByte(); err != nil || b != 'x' {
				t.Fatalf("the byte was taken by the look: %q, %v", b, err)
			}
			// Bytes already in the reader's buffer count as well, with
			// nothing left on the socket.
			if _, err := agent.Write([]byte("yz")); err != nil {
				t.Fatal(err)
			}
			if _, err := ec.br.Peek(2); err != nil { // both in the buffer
				t.Fatal(err)
			}
			if b, err := ec.br.ReadByte(); err != nil || b != 'y' || ec.br.Buffered() != 1 {
				t.Fatalf("%q, %v, %d buffered", b, err, ec.br.Buffered())
			}
			if err := ec.quiet(); !errors.Is(err, errOutOfTurn) {
				t.Fatalf("with a byte buffered: %v", err)
			}

			ec, agent = pair()
			agent.Close()
			testenv.WaitFor(t, "the agent's close", func() bool { return ec.quiet() != nil })
			if err := ec.quiet(); !errors.Is(err, io.EOF) {
				t.Fatalf("after the agent closed: %v", err)
			}
		})
	}
	t.Run("not a socket of ours", func(t *testing.T) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		if rawSocket(a) != nil || rawSocket(wrapped{a}) != nil {
			t.Fatal("a pipe has a socket to look at")
		}
		l, err := net.Listen("unix", t.TempDir()+"/s")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		u, err := net.Dial("unix", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer u.Close()
		if rawSocket(tls.Client(u, &tls.Config{})) != nil {
			t.Fatal("TLS is looked through")
		}
	})
}
