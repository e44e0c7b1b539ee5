package agentconn_test

import (
	"context"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/shim"
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

	t.Run("connection dropped", func(t *testing.T) {
		var (
			mu    sync.Mutex
			conns []net.Conn
		)
		c := agentconn.New(func(ctx context.Context) (net.Conn, error) {
			conn, err := dialer(a.socket)(ctx)
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
		readUntil(t, term, "ready")
		term.Close()
		waitGone(t, term.PID())
	})

	// Once the agent is stopped, nothing of the client or the server remains.
	a.stop()
	goleak.VerifyNone(t)
}

// TestOneConnection checks that concurrent calls share one connection.
func TestOneConnection(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	var dials atomic.Int32
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) {
		dials.Add(1)
		return dialer(a.socket)(ctx)
	})
	defer c.Close()
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
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
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d connections dialed, want 1", n)
	}
}
