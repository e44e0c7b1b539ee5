package shim

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/testenv"
)

// serveAgent runs a Server with opts (its reaper filled in, and its
// logger when opts has none) on a unix socket of the test's, and returns
// it, a client of it (HTTP/2 with prior knowledge when h2, else HTTP/1.1,
// as the e2b SDK speaks through the gateway) and stop, which the test's
// end calls too. Tests that use it must not run in parallel: a process
// has one reaper.
func serveAgent(t *testing.T, opts Options, h2 bool) (srv *Server, c *http.Client, stop func()) {
	t.Helper()
	sock := filepath.Join(testenv.ShortTempDir(t), "agent.sock")
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	r, err := StartReaper(log)
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger, opts.Reaper = log, r
	srv, err = NewServer(opts)
	if err != nil {
		r.Stop()
		t.Fatal(err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		r.Stop()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return testenv.UnixDialer(sock)(ctx)
	}}
	if h2 {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr.Protocols = &p
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			tr.CloseIdleConnections()
			cancel()
			if err := <-served; err != nil {
				t.Errorf("serve: %v", err)
			}
			srv.Close()
			r.Stop()
		})
	}
	t.Cleanup(stop)
	return srv, &http.Client{Transport: tr}, stop
}

// agentClient returns a client of the agent c reaches, as the control
// plane's, closed at the test's end.
func agentClient(t *testing.T, c *http.Client) *agentconn.Client {
	dial := c.Transport.(*http.Transport).DialContext
	ac := agentconn.New(func(ctx context.Context) (net.Conn, error) { return dial(ctx, "unix", "agent") })
	t.Cleanup(func() { ac.Close() })
	return ac
}

// upgraded dials the agent c reaches and has it switch the connection to
// protocol name at path, as the client of a framed path does; it returns
// the connection, its reader and the 101's header.
func upgraded(t *testing.T, c *http.Client, path, name string) (net.Conn, *bufio.Reader, http.Header) {
	t.Helper()
	conn, err := c.Transport.(*http.Transport).DialContext(t.Context(), "unix", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	br := bufio.NewReader(conn)
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: agent\r\nConnection: Upgrade\r\nUpgrade: %s\r\nContent-Length: 0\r\n\r\n", path, name)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %s", res.Status)
	}
	return conn, br, res.Header
}
