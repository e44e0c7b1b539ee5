package agentconn_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestDisconnect checks that a client going away mid-stream kills its
// foreground processes and leaks no goroutine on either side.
func TestDisconnect(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	dir := t.TempDir()
	big := dir + "/big"
	if err := os.WriteFile(big, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("close while output streams", func(t *testing.T) {
		es, err := a.client.Exec(ctx, agentconn.ExecRequest{Argv: []string{"yes"}})
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			if _, err := es.Recv(); err != nil {
				t.Fatal(err)
			}
		}
		es.Close()
		waitGone(t, es.PID())
	})

	t.Run("context cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		es, err := a.client.Exec(cctx, agentconn.ExecRequest{Argv: []string{"sleep", "1000"}, OpenStdin: true})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		if _, err := es.Recv(); err == nil {
			t.Fatal("receive after cancel succeeded")
		}
		es.Close()
		waitGone(t, es.PID())
	})

	t.Run("context cancelled while receiving", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		es, err := a.client.Exec(cctx, agentconn.ExecRequest{Argv: []string{"sleep", "1000"}})
		if err != nil {
			t.Fatal(err)
		}
		term, err := a.client.Terminal(cctx, agentconn.TerminalRequest{Argv: []string{"sleep", "1001"}})
		if err != nil {
			t.Fatal(err)
		}
		// Both are blocked reading a silent process when the context ends.
		done := make(chan error, 2)
		go func() { _, err := es.Wait(nil, nil); done <- err }()
		go func() { _, err := io.Copy(io.Discard, term); done <- err }()
		waitBlockedReading(t, 2)
		cancel()
		for range 2 {
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("a blocked receive ended without an error after cancel")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a blocked receive did not end when its context was cancelled")
			}
		}
		term.Close()
		waitGone(t, es.PID())
		waitGone(t, term.PID())
	})

	t.Run("connection dropped", func(t *testing.T) {
		var (
			mu    sync.Mutex
			conns []net.Conn
		)
		c := agentconn.New(func(ctx context.Context) (net.Conn, error) {
			conn, err := testenv.UnixDialer(a.socket)(ctx)
			if err == nil {
				mu.Lock()
				conns = append(conns, conn)
				mu.Unlock()
			}
			return conn, err
		})
		defer c.Close()
		es, err := c.Exec(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "sleep 1000 & wait"}})
		if err != nil {
			t.Fatal(err)
		}
		term, err := c.Terminal(ctx, agentconn.TerminalRequest{Argv: []string{"sh"}})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		for _, conn := range conns {
			conn.Close()
		}
		mu.Unlock()
		if _, err := es.Wait(nil, nil); err == nil {
			t.Fatal("wait on a dropped connection succeeded")
		}
		es.Close()
		term.Close()
		waitGone(t, es.PID())
		waitGone(t, term.PID())
	})

	t.Run("file streams closed early", func(t *testing.T) {
		r, err := a.client.ReadFile(ctx, big)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(r, make([]byte, 100<<10)); err != nil {
			t.Fatal(err)
		}
		r.Close()
		tr, err := a.client.DownloadTar(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(tr, make([]byte, 100<<10)); err != nil {
			t.Fatal(err)
		}
		tr.Close()
		// An upload whose source fails midway.
		pr, pw := io.Pipe()
		go func() {
			pw.Write(make([]byte, 200<<10))
			pw.CloseWithError(io.ErrUnexpectedEOF)
		}()
		if _, err := a.client.WriteFile(ctx, dir+"/partial", pr, 0); err == nil {
			t.Fatal("write from a failing source succeeded")
		}
	})

	t.Run("terminal closed", func(t *testing.T) {
		term, err := a.client.Terminal(ctx, agentconn.TerminalRequest{Argv: []string{"sh"}})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(term, "echo ready\n")
		testenv.ReadUntil(t, term, "ready")
		term.Close()
		waitGone(t, term.PID())
	})

	// Once the agent is stopped, nothing of the client or the server remains.
	a.stop()
	goleak.VerifyNone(t)
}

// TestOneConnection checks that concurrent calls share a few connections:
// the one HTTP/2 connection, and Exec's framed connections, at most four,
// kept for the calls after them, never one per call.
func TestOneConnection(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	var dials atomic.Int32
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) {
		dials.Add(1)
		return testenv.UnixDialer(a.socket)(ctx)
	})
	defer c.Close()
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	burst := func() {
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for range 20 {
			wg.Go(func() {
				res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"echo", "hi"}})
				if err == nil && string(res.Stdout) != "hi\n" {
					err = io.ErrUnexpectedEOF
				}
				errs <- err
			})
			wg.Go(func() {
				_, err := c.Stat(ctx, "/")
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// How many framed connections a burst opens depends on how its calls
	// overlap; what holds is the bound, over bursts too, as connections
	// are kept (TestExecFramesKept checks the keeping itself).
	for i := range 2 {
		burst()
		if n := dials.Load(); n < 1 || n > 1+4 {
			t.Fatalf("%d connections dialed after burst %d, want 1 and at most 4 framed ones", n, i+1)
		}
	}
}

// waitBlockedReading waits until n goroutines are blocked reading an
// HTTP/2 response body.
func waitBlockedReading(t *testing.T, n int) {
	t.Helper()
	buf := make([]byte, 1<<20)
	testenv.Eventually(t, func() error {
		if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Count(stacks, "(*http2pipe).Read(") < n {
			return fmt.Errorf("fewer than %d goroutines blocked reading:\n%s", n, stacks)
		}
		return nil
	})
}
