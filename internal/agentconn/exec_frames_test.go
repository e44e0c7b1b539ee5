package agentconn_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestExecFramesKept: calls one after another share one framed exec
// connection, kept between them, whatever each call's end was: an exit,
// a refusal before the start, a process killed by its timeout.
func TestExecFramesKept(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	var dials atomic.Int32
	c := agentconn.New(countingDial(&dials, a.socket))
	defer c.Close()
	for i := range 30 {
		res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "echo $0", "x"}})
		if err != nil || string(res.Stdout) != "x\n" {
			t.Fatalf("call %d: %v %q", i, err, res.Stdout)
		}
		_, err = c.Run(ctx, agentconn.ExecRequest{Argv: []string{"paddock-no-such-command"}})
		wantCode(t, err, errdefs.ErrNotFound, "command_not_found")
		res, err = c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sleep", "5"}, Timeout: 1})
		if err != nil || !res.Exit.TimedOut {
			t.Fatalf("call %d with a timeout: %v %+v", i, err, res.Exit)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d connections dialed for 90 calls in turn, want 1", n)
	}
}

// TestExecFramesNotKeptAfterClose: a call that ends after its client's
// Close closes its connection rather than keeping it, with the read that
// watches a kept one: a client the control plane dropped holds nothing
// open until the agent goes.
func TestExecFramesNotKeptAfterClose(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	var open atomic.Int32
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) {
		conn, err := testenv.UnixDialer(a.socket)(ctx)
		if err != nil {
			return nil, err
		}
		open.Add(1)
		return &countedConn{Conn: conn, open: &open}, nil
	})
	flag := filepath.Join(t.TempDir(), "go")
	es, err := c.Exec(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", `while [ ! -e "$0" ]; do sleep 0.01; done`, flag}})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if st := untilExit(t, es); st.Code != 0 {
		t.Fatalf("exit %+v", st)
	}
	es.Close()
	if n, kept := open.Load(), agentconn.KeptExecConns(c); n != 0 || kept != 0 {
		t.Fatalf("after the client's Close and its last call's end: %d connections open, %d kept", n, kept)
	}
	// The client still works, on connections it no longer keeps.
	if res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"true"}}); err != nil || res.Exit.Code != 0 {
		t.Fatalf("a call after Close: %v %+v", err, res.Exit)
	}
	if n := open.Load(); n != 0 {
		t.Fatalf("%d connections open after a call made after Close", n)
	}
}

// countedConn counts itself out of open when it is closed.
type countedConn struct {
	net.Conn
	open *atomic.Int32
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

// TestExecFramesCancelAtClose: a call whose context is cancelled as it is
// closed, after its exit, does not leave its connection kept while the
// cancellation closes it: the next call, on whatever connection, starts
// its process once and succeeds.
func TestExecFramesCancelAtClose(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	f := filepath.Join(t.TempDir(), "starts")
	const calls = 300
	for i := range calls {
		cctx, cancel := context.WithCancel(ctx)
		es, err := a.client.Exec(cctx, agentconn.ExecRequest{Argv: []string{"true"}})
		if err != nil {
			t.Fatal(err)
		}
		untilExit(t, es)
		cancel()
		es.Close()
		if _, err := a.client.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "echo x >> " + f}}); err != nil {
			t.Fatalf("the call after cancelled call %d: %v", i, err)
		}
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "x"); n != calls {
		t.Fatalf("%d processes started for %d calls", n, calls)
	}
}

// TestExecFramesAgentRestarted: a kept connection to an agent that then
// stopped (a sandbox stopped and started, its agent anew on the same
// socket) is seen closed, and the next call goes on a new connection: on
// a unix socket, over TCP (as the Kubernetes provider's link is, where a
// send to a closed connection would succeed and the call fail), and on a
// connection whose socket the client cannot look at (another library's
// stream, or TLS), which it reads while it is kept. A socket it can look
// at is looked at now and then while it is kept, and by the call that
// takes it, before the call is sent.
func TestExecFramesAgentRestarted(t *testing.T) {
	for _, tt := range []struct {
		name string
		dial func(t *testing.T, sock string) func(context.Context) (net.Conn, error)
		// looked is whether the client looks at the connection's socket
		// rather than reading it while it is kept.
		looked bool
	}{
		{"unix", func(_ *testing.T, sock string) func(context.Context) (net.Conn, error) {
			return testenv.UnixDialer(sock)
		}, true},
		{"tcp", func(t *testing.T, sock string) func(context.Context) (net.Conn, error) {
			proxy := tcpToUnix(t, sock)
			return func(ctx context.Context) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "tcp", proxy)
			}
		}, true},
		{"opaque", func(_ *testing.T, sock string) func(context.Context) (net.Conn, error) {
			dial := testenv.UnixDialer(sock)
			return func(ctx context.Context) (net.Conn, error) {
				c, err := dial(ctx)
				return opaqueConn{c}, err
			}
		}, false},
	} {
		for _, seen := range []string{"while kept", "by the next call"} {
			if seen == "by the next call" && !tt.looked {
				continue // such a connection is read while it is kept
			}
			t.Run(tt.name+"/"+seen, func(t *testing.T) {
				sock := filepath.Join(testenv.ShortTempDir(t), "agent.sock")
				stop := shimtest.StartAt(t, sock, shim.Options{})
				watch := 20 * time.Millisecond
				if seen == "by the next call" {
					watch = time.Hour
				}
				c := agentconn.New(tt.dial(t, sock), agentconn.WithKeptWatch(watch))
				defer c.Close()
				ctx := ctxT(t)
				run := func() {
					t.Helper()
					res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"echo", "hi"}})
					if err != nil || string(res.Stdout) != "hi\n" {
						t.Fatalf("%v %q", err, res.Stdout)
					}
				}
				run()
				if agentconn.KeptExecConns(c) != 1 {
					t.Fatalf("%d framed connections kept after a call, want 1", agentconn.KeptExecConns(c))
				}
				stop()
				if seen == "while kept" {
					testenv.WaitFor(t, "the client to see its kept connection closed", func() bool { return agentconn.KeptExecConns(c) == 0 })
				} else {
					// The agent's close has reached the client, which has
					// not looked since: the call must look before it sends.
					testenv.WaitFor(t, "the agent's close to reach the client", func() bool { return agentconn.KeptClosed(c) })
				}
				defer shimtest.StartAt(t, sock, shim.Options{})()
				run()
				run()
			})
		}
	}
}

// opaqueConn is a connection whose socket the client cannot see.
type opaqueConn struct{ net.Conn }

// tcpToUnix forwards TCP connections on a loopback port to the unix
// socket at sock, each closed when either side ends; it returns the
// port's address.
func tcpToUnix(t *testing.T, sock string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("unix", sock)
			if err != nil {
				in.Close()
				continue
			}
			t.Cleanup(func() { in.Close(); out.Close() })
			for _, pair := range [][2]net.Conn{{in, out}, {out, in}} {
				wg.Go(func() {
					_, _ = io.Copy(pair[0], pair[1])
					in.Close()
					out.Close()
				})
			}
		}
	})
	return l.Addr().String()
}

// TestExecFramesSignalBurst: signals sent faster than the agent applies
// them wait for it; the call is not cut off. After the call's end, a
// signal is refused.
func TestExecFramesSignalBurst(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	es, err := a.client.Exec(ctx, agentconn.ExecRequest{Argv: []string{"sleep", "100"}})
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	for i := range 2000 {
		if err := es.Signal(syscall.SIGCONT); err != nil {
			t.Fatalf("signal %d: %v", i, err)
		}
	}
	if err := es.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if exit := untilExit(t, es); exit.Signal != "SIGTERM" {
		t.Fatalf("exit %+v", exit)
	}
	// As on Exec's stream, the call's end refuses what is sent after it.
	if err := es.Signal(syscall.SIGTERM); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("a signal after the call's end: %v, want it refused as unavailable", err)
	}
}

// TestExecFramesEnvRequired: with WithEnvRequired, a framed call never
// reaches an agent that has lost its environment. The agent restarts
// without it; the framed connection, dialed plainly, finds it has none,
// so the call goes by Exec, whose connection's dial gives it back (as the
// control plane's dial does), and the process sees it.
func TestExecFramesEnvRequired(t *testing.T) {
	sock := filepath.Join(testenv.ShortTempDir(t), "agent.sock")
	stop := shimtest.StartAt(t, sock, shim.Options{})
	plain := testenv.UnixDialer(sock)
	env := map[string]string{"PADDOCK_TEST_SECRET": "s3"}
	configured := func(ctx context.Context) (net.Conn, error) {
		once := agentconn.New(plain)
		defer once.Close()
		if err := once.SetEnv(ctx, env); err != nil {
			return nil, err
		}
		return plain(ctx)
	}
	c := agentconn.New(configured, agentconn.WithBytesDial(plain), agentconn.WithEnvRequired())
	defer c.Close()
	ctx := ctxT(t)
	printenv := func() string {
		t.Helper()
		res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "echo -n $PADDOCK_TEST_SECRET"}})
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Stdout)
	}
	if err := c.Health(ctx); err != nil { // the main connection, configured
		t.Fatal(err)
	}
	if got := printenv(); got != "s3" {
		t.Fatalf("before the restart: %q, want s3", got)
	}
	stop()
	defer shimtest.StartAt(t, sock, shim.Options{})()
	for i := range 3 {
		if got := printenv(); got != "s3" {
			t.Fatalf("call %d after the restart: %q, want s3", i, got)
		}
	}
}

// TestExecFramesOldAgent: an agent without the framed path (one started
// before it existed) answers its upgrade with 404, once, and every call
// goes by ProcessService.Exec.
func TestExecFramesOldAgent(t *testing.T) {
	var asked, streams atomic.Int32
	sock := serveOldAgent(t, agentpb.ExecFramesPath, func(path string) {
		switch {
		case path == agentpb.ExecFramesPath:
			asked.Add(1)
		case strings.HasSuffix(path, "/Exec"):
			streams.Add(1)
		}
	})
	c := agentconn.New(testenv.UnixDialer(sock))
	defer c.Close()
	for range 3 {
		res, err := c.Run(ctxT(t), agentconn.ExecRequest{Argv: []string{"echo", "hi"}})
		if err != nil || string(res.Stdout) != "hi\n" {
			t.Fatalf("%v %q", err, res.Stdout)
		}
	}
	if asked.Load() != 1 || streams.Load() != 3 {
		t.Fatalf("the framed path was asked for %d times and Exec called %d times, want 1 and 3", asked.Load(), streams.Load())
	}
}

// serveOldAgent serves a shim on a unix socket of the test's as an agent
// started before the path without existed: it answers 404 there. seen is
// called with every request's path. It returns the socket's path.
func serveOldAgent(t *testing.T, without string, seen func(path string)) string {
	t.Helper()
	sock := filepath.Join(testenv.ShortTempDir(t), "agent.sock")
	srv, _ := shimtest.NewServer(t, shim.Options{})
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	hs := &http.Server{Protocols: &p, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		seen(req.URL.Path)
		if req.URL.Path == without {
			http.NotFound(w, req)
			return
		}
		srv.Handler().ServeHTTP(w, req)
	})}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return sock
}

// untilExit reads es's events up to its process's exit, leaving the
// stream open.
func untilExit(t *testing.T, es *agentconn.ExecStream) agentconn.ExitStatus {
	t.Helper()
	for {
		ev, err := es.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Exit != nil {
			return *ev.Exit
		}
	}
}
