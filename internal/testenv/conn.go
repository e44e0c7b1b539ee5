package testenv

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// ReadUntil reads from r until what it read contains want, and returns
// all of it; the test fails if r ends or fails first. The reader's own
// deadline (its context) bounds the wait.
func ReadUntil(t testing.TB, r io.Reader, want string) string {
	t.Helper()
	var got bytes.Buffer
	buf := make([]byte, 4096)
	for !strings.Contains(got.String(), want) {
		n, err := r.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("reading until %q: %v; got %q", want, err, got.String())
		}
	}
	return got.String()
}

// DroppableTransport is an HTTP transport and a func that drops every
// connection it has dialled, as a network failure would: no close reaches
// the server. Its idle connections close when the test ends.
func DroppableTransport(t testing.TB) (*http.Transport, func()) {
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	dialer := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
		return c, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return tr, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
		conns = nil
	}
}
