package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// openFDs counts this process's open sockets and pipes: what a leaked
// connection or process would hold. (Files are left out: the store's
// connection pool opens database files as it grows.)
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err == nil && (strings.HasPrefix(link, "socket:") || strings.HasPrefix(link, "pipe:")) {
			n++
		}
	}
	return n
}

// TestDisconnectLeaksNothing ends every kind of streamed request from the
// client's side in the middle, and checks that the server (this process)
// is left with no extra goroutine or file descriptor, and the sandbox with
// no process that belonged to a foreground request.
func TestDisconnectLeaksNothing(t *testing.T) {
	s := runningSandbox(t)
	ctx := bounded(t)
	// Warm up: the agent connection is made and pooled, and a file to
	// download exists.
	s.run(t, "true")
	if _, err := s.sdk.WriteFile(ctx, "acme", "dev", s.rid, "/workspace/big.bin", testenv.PatternReader(32<<20), pc.WriteFileOptions{}); err != nil {
		t.Fatal(err)
	}
	// Background processes are meant to outlive their requests; start the
	// one to follow now, so it is part of the baseline.
	bg, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"sh", "-c", "while :; do echo tick; sleep 0.02; done"}, Background: true})
	if err != nil {
		t.Fatal(err)
	}
	quiesce := func() {
		s.transport.CloseIdleConnections()
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		s.env.Server.CloseClientConnections()
		// The agent client's kept connections (its framed execs' among
		// them) are not a request's: closed, as the HTTP ones are.
		if c, _, err := s.env.Runtimes.Agent(ctx, s.rid); err == nil {
			_ = c.Close()
		}
	}
	quiesce()
	baseline := goleak.IgnoreCurrent()
	fds := openFDs(t)
	// The agent's descriptors but its sockets: those are the control
	// plane's connections, as many as its client keeps, which the
	// server's count below checks.
	const agentFDs = "ls -l /proc/1/fd | grep -vc socket:"
	shimFDs := s.run(t, "sh", "-c", agentFDs)

	// Each case starts a request, reads a little of its answer, and goes
	// away by cancelling it.
	cases := []struct {
		name  string
		start func(ctx context.Context) (io.Closer, error)
	}{
		{"streamed exec of a silent process", func(ctx context.Context) (io.Closer, error) {
			st, err := s.sdk.ExecStream(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"sh", "-c", "echo ready; exec sleep 1001"}})
			if err == nil {
				_, err = st.Recv()
			}
			return st, err
		}},
		{"streamed exec of a flood", func(ctx context.Context) (io.Closer, error) {
			st, err := s.sdk.ExecStream(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"yes", "flood-1002"}})
			if err == nil {
				_, err = st.Recv()
			}
			return st, err
		}},
		{"streamed exec with open stdin", func(ctx context.Context) (io.Closer, error) {
			st, err := s.sdk.ExecStream(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"sh", "-c", "echo ready; exec cat -n 1003"}, OpenStdin: true})
			if err == nil {
				_, err = st.Recv()
			}
			return st, err
		}},
		{"attach following a background process", func(ctx context.Context) (io.Closer, error) {
			st, err := s.sdk.Attach(ctx, "acme", "dev", s.rid, bg.ID, pc.AttachOptions{})
			if err == nil {
				_, err = st.Recv()
			}
			return st, err
		}},
		{"file download", func(ctx context.Context) (io.Closer, error) {
			r, err := s.sdk.ReadFile(ctx, "acme", "dev", s.rid, "/workspace/big.bin")
			if err == nil {
				_, err = io.ReadFull(r, make([]byte, 1<<20))
			}
			return r, err
		}},
		{"tar download", func(ctx context.Context) (io.Closer, error) {
			r, err := s.sdk.DownloadTar(ctx, "acme", "dev", s.rid, "/workspace")
			if err == nil {
				_, err = io.ReadFull(r, make([]byte, 1<<20))
			}
			return r, err
		}},
		{"file upload", func(ctx context.Context) (io.Closer, error) {
			pr, pw := io.Pipe()
			go func() {
				_, _ = s.sdk.WriteFile(ctx, "acme", "dev", s.rid, "/workspace/partial.bin", pr, pc.WriteFileOptions{})
				pr.Close()
			}()
			_, err := io.CopyN(pw, testenv.PatternReader(8<<20), 8<<20)
			// The body is cut, never ended: an EOF here could complete
			// the upload before the transport saw the cancellation.
			return cutBody{pw}, err
		}},
		{"terminal", func(ctx context.Context) (io.Closer, error) {
			tm, err := s.sdk.Terminal(ctx, "acme", "dev", s.rid, pc.TerminalOptions{Argv: []string{"sh", "-c", "echo ready; exec sleep 1004"}})
			if err == nil {
				_, err = bufio.NewReader(tm).ReadString('\n')
			}
			return tm, err
		}},
		{"collected exec", func(ctx context.Context) (io.Closer, error) {
			go func() { _, _ = s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"sleep", "1005"}}) }()
			testenv.WaitFor(t, "sleep 1005 to start", func() bool { return strings.Contains(s.run(t, "ps"), "sleep 1005") })
			return io.NopCloser(nil), nil
		}},
	}
	for _, tc := range cases {
		cctx, cancel := context.WithCancel(ctx)
		c, err := tc.start(cctx)
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", tc.name, err)
		}
		cancel()
		_ = c.Close()
	}

	// In the sandbox: what belonged to a foreground request is gone, the
	// background process runs on, no partial upload is left, and the
	// agent holds no more descriptors than before.
	testenv.WaitFor(t, "foreground processes to be killed", func() bool {
		ps := s.run(t, "ps")
		for _, marker := range []string{"1001", "1002", "1003", "1004", "1005"} {
			if strings.Contains(ps, marker) {
				return false
			}
		}
		return true
	})
	if p := s.process(t, bg.ID); !p.Running {
		t.Fatalf("the background process stopped with its follower: %+v", p)
	}
	// The agent removes a cut upload once its call ends, which the server
	// notices after the client has gone: wait for it, as for the processes.
	testenv.Eventually(t, func() error {
		if ls := s.run(t, "ls", "-la", "/workspace"); strings.Contains(ls, "partial") {
			return fmt.Errorf("the partial upload is still there:\n%s", ls)
		}
		return nil
	})
	testenv.WaitFor(t, "the agent's descriptors to settle", func() bool {
		return s.run(t, "sh", "-c", agentFDs) == shimFDs
	})
	if err := s.sdk.SignalProcess(ctx, "acme", "dev", s.rid, bg.ID, pc.SignalRequest{Signal: "KILL"}); err != nil {
		t.Fatal(err)
	}

	// In the server: no goroutine or descriptor more than before. The
	// calls' connections close as idle ones only once their last streams
	// end, so each look closes what is idle by then.
	testenv.Eventually(t, func() error {
		quiesce()
		if leak, n := goleak.Find(baseline), openFDs(t); leak != nil || n > fds {
			return fmt.Errorf("after the disconnects the server has %d sockets and pipes (%d before); goroutines: %v", n, fds, leak)
		}
		return nil
	})
}

// cutBody closes an upload's body with an error, as a client that went
// away mid-upload leaves it.
type cutBody struct{ pw *io.PipeWriter }

func (c cutBody) Close() error {
	return c.pw.CloseWithError(errors.New("the client went away"))
}
