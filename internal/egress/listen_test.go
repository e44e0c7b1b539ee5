package egress

import (
	"bufio"
	"net"
	"strings"
	"testing"
)

// TestListenSharedSharesThePort: two replicas listen on one proxy port;
// connections reach both, and once one stops the other takes every
// connection. A program that holds the port without SO_REUSEPORT makes
// the listen fail, as before.
func TestListenSharedSharesThePort(t *testing.T) {
	a, err := ListenShared(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	addr := a.Addr().String()
	b, err := ListenShared(t.Context(), addr)
	if err != nil {
		t.Fatalf("a second replica on %s: %v", addr, err)
	}
	defer b.Close()
	serveName(a, "a")
	serveName(b, "b")

	seen := map[string]bool{}
	for i := 0; i < 1000 && !(seen["a"] && seen["b"]); i++ {
		seen[dialName(t, addr)] = true
	}
	if !seen["a"] || !seen["b"] {
		t.Fatalf("connections reached %v, want both replicas", seen)
	}
	a.Close()
	for range 50 {
		if got := dialName(t, addr); got != "b" {
			t.Fatalf("a connection after a stopped reached %q, want b", got)
		}
	}

	plain, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if l, err := ListenShared(t.Context(), plain.Addr().String()); err == nil {
		l.Close()
		t.Fatal("ListenShared took a port another program holds without SO_REUSEPORT")
	} else if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("ListenShared on a held port: %v, want address already in use", err)
	}
}

// serveName answers every connection to l with name.
func serveName(l net.Listener, name string) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte(name + "\n"))
			_ = c.Close()
		}
	}()
}

// dialName connects to addr and reads the name the listener answers.
func dialName(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("reading from %s: %v", addr, err)
	}
	return strings.TrimSpace(line)
}
