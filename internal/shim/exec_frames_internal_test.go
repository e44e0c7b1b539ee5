package shim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestExecFramesProtocol plays Exec's framed path on the wire: a request
// that is no upgrade, the environment's mark in the upgrade's answer,
// calls in turn on one connection, calls refused before their start (no
// start, a first frame that is no message, stdin or a terminal asked for)
// after which the connection carries the next call, a signal, a
// connection closed within a call, which kills its foreground process
// (also after the client ended its side early), the next call after such
// an early end,
// clients that break the path's rules, whose connection is closed as if
// they had closed it, and the server's stop, which closes a kept one.
func TestExecFramesProtocol(t *testing.T) {
	srv, c, stop := serveAgent(t, Options{}, false)

	open := func(t *testing.T) (net.Conn, *bufio.Reader, http.Header) {
		return upgraded(t, c, agentpb.ExecFramesPath, agentpb.ExecFramesUpgrade)
	}
	send := func(t *testing.T, conn net.Conn, m *agentpb.ExecRequest) {
		t.Helper()
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := agentpb.WriteFrame(conn, b); err != nil {
			t.Fatal(err)
		}
	}
	start := func(argv ...string) *agentpb.ExecRequest {
		return &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Start{Start: &agentpb.ProcessStart{Argv: argv}}}
	}
	endRequests := func(t *testing.T, conn net.Conn) {
		t.Helper()
		if err := agentpb.WriteFrame(conn, nil); err != nil {
			t.Fatal(err)
		}
	}
	// answer reads a call's frames to its end: the events, and the end's
	// refusal, if any.
	answer := func(t *testing.T, br *bufio.Reader) (events []*agentpb.ExecResponse, refusal *agentpb.FrameError) {
		t.Helper()
		for {
			b, err := agentpb.ReadFrame(br, agentpb.ExecFrameMax+1)
			if err != nil {
				t.Fatalf("after %d events: %v", len(events), err)
			}
			switch b[0] {
			case agentpb.ExecFrameEvent:
				m := new(agentpb.ExecResponse)
				if err := proto.Unmarshal(b[1:], m); err != nil {
					t.Fatal(err)
				}
				events = append(events, m)
			case agentpb.ExecFrameEnd:
				return events, nil
			case agentpb.ExecFrameFailed:
				refusal = new(agentpb.FrameError)
				if err := json.Unmarshal(b[1:], refusal); err != nil {
					t.Fatal(err)
				}
				return events, refusal
			default:
				t.Fatalf("a frame of kind %d", b[0])
			}
		}
	}
	output := func(events []*agentpb.ExecResponse) (out string, exit *agentpb.Exited) {
		for _, e := range events {
			out += string(e.GetOutput().GetData())
			if x := e.GetExited(); x != nil {
				exit = x
			}
		}
		return out, exit
	}
	echoCall := func(t *testing.T, conn net.Conn, br *bufio.Reader, word string) {
		t.Helper()
		send(t, conn, start("echo", word))
		events, refusal := answer(t, br)
		endRequests(t, conn)
		out, exit := output(events)
		if refusal != nil || exit == nil || exit.ExitCode != 0 || out != word+"\n" || events[0].GetStarted() == nil {
			t.Fatalf("echo: %q, exit %v, refused %v, first %v", out, exit, refusal, events[0])
		}
	}
	// started sends a start of sleep and reads its Started event.
	started := func(t *testing.T, conn net.Conn, br *bufio.Reader) (pid int) {
		t.Helper()
		send(t, conn, start("sleep", "1000"))
		b, err := agentpb.ReadFrame(br, agentpb.ExecFrameMax+1)
		if err != nil {
			t.Fatal(err)
		}
		m := new(agentpb.ExecResponse)
		if err := proto.Unmarshal(b[1:], m); err != nil || m.GetStarted() == nil {
			t.Fatalf("first frame %q: %v", b, err)
		}
		return int(m.GetStarted().GetPid())
	}
	// terminated reads a call's answer: a process ended by SIGTERM.
	terminated := func(t *testing.T, br *bufio.Reader) {
		t.Helper()
		events, refusal := answer(t, br)
		if _, exit := output(events); refusal != nil || exit == nil || exit.SignalName != "SIGTERM" {
			t.Fatalf("exit %v, refused %v", exit, refusal)
		}
	}
	killed := func(t *testing.T, pid int) {
		t.Helper()
		testenv.WaitFor(t, "the foreground process killed", func() bool {
			return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
		})
	}
	closedUnanswered := func(t *testing.T, br *bufio.Reader) {
		t.Helper()
		// Closed with the call's last frame perhaps unread: a reset.
		if _, err := agentpb.ReadFrame(br, agentpb.ExecFrameMax+1); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("got %v, want the connection closed", err)
		}
	}
	wantRefused := func(t *testing.T, br *bufio.Reader, reason string) {
		t.Helper()
		events, refusal := answer(t, br)
		if len(events) != 0 || refusal == nil || connect.Code(refusal.Code) != connect.CodeInvalidArgument || refusal.Reason != reason {
			t.Fatalf("events %v, refusal %+v, want %s before any event", events, refusal, reason)
		}
	}

	t.Run("not an upgrade", func(t *testing.T) {
		res, err := c.Post("http://agent"+agentpb.ExecFramesPath, "application/octet-stream", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUpgradeRequired || res.Header.Get("Upgrade") != agentpb.ExecFramesUpgrade {
			t.Fatalf("%s, Upgrade %q", res.Status, res.Header.Get("Upgrade"))
		}
	})
	t.Run("the environment's mark", func(t *testing.T) {
		if _, _, h := open(t); h.Get(agentpb.ExecFramesEnvHeader) != "" {
			t.Fatalf("before SetEnv: %q", h.Get(agentpb.ExecFramesEnvHeader))
		}
		if err := srv.env.replace(nil); err != nil {
			t.Fatal(err)
		}
		if _, _, h := open(t); h.Get(agentpb.ExecFramesEnvHeader) != "set" {
			t.Fatalf("after SetEnv: %q, want set", h.Get(agentpb.ExecFramesEnvHeader))
		}
	})
	t.Run("calls in turn", func(t *testing.T) {
		conn, br, _ := open(t)
		for i := range 5 {
			echoCall(t, conn, br, fmt.Sprint("call", i))
		}
	})
	t.Run("refused before the start", func(t *testing.T) {
		conn, br, _ := open(t)
		endRequests(t, conn) // a call with no start: its end frame comes first
		wantRefused(t, br, "missing_start")
		if err := agentpb.WriteFrame(conn, []byte{0xff, 0xff, 0xff}); err != nil {
			t.Fatal(err)
		}
		wantRefused(t, br, "invalid_message")
		endRequests(t, conn)
		send(t, conn, &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Signal{Signal: agentpb.Signal_SIGNAL_TERM}})
		wantRefused(t, br, "missing_start")
		endRequests(t, conn)
		// Stdin and terminals go by Exec's stream.
		send(t, conn, &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Start{Start: &agentpb.ProcessStart{Argv: []string{"cat"}, Stdin: true}}})
		wantRefused(t, br, "invalid_stdin")
		endRequests(t, conn)
		send(t, conn, &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Start{Start: &agentpb.ProcessStart{Argv: []string{"sh"}, Pty: &agentpb.Pty{}}}})
		wantRefused(t, br, "invalid_stdin")
		endRequests(t, conn)
		echoCall(t, conn, br, "after the refusals")
	})
	t.Run("a signal", func(t *testing.T) {
		conn, br, _ := open(t)
		started(t, conn, br)
		send(t, conn, &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Signal{Signal: agentpb.Signal_SIGNAL_TERM}})
		terminated(t, br)
		endRequests(t, conn)
		echoCall(t, conn, br, "after the signal")
	})
	// A client may end its request side before the call is over; the
	// connection is read on, so its end still ends the call.
	for _, early := range []bool{false, true} {
		name := "closed within a call"
		if early {
			name += " after the client's end"
		}
		t.Run(name, func(t *testing.T) {
			conn, br, _ := open(t)
			pid := started(t, conn, br)
			if early {
				endRequests(t, conn)
			}
			conn.Close()
			killed(t, pid)
		})
	}
	t.Run("the next call after an early end", func(t *testing.T) {
		conn, br, _ := open(t)
		pid := started(t, conn, br)
		endRequests(t, conn)
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		terminated(t, br)
		echoCall(t, conn, br, "after the early end")
	})
	// A client that breaks the path's rules loses its connection, and the
	// call in progress ends as if it had closed it.
	for _, tt := range []struct {
		name string
		send func(t *testing.T, conn net.Conn)
	}{
		{"stdin within a call", func(t *testing.T, conn net.Conn) {
			send(t, conn, &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Stdin{Stdin: []byte("x")}})
		}},
		{"no message within a call", func(t *testing.T, conn net.Conn) {
			if err := agentpb.WriteFrame(conn, []byte{0xff, 0xff, 0xff}); err != nil {
				t.Fatal(err)
			}
		}},
		{"a start before the call's end", func(t *testing.T, conn net.Conn) {
			endRequests(t, conn)
			send(t, conn, start("true"))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, br, _ := open(t)
			pid := started(t, conn, br)
			tt.send(t, conn)
			killed(t, pid)
			closedUnanswered(t, br)
		})
	}
	t.Run("a kept connection closed by the server's stop", func(t *testing.T) {
		conn, br, _ := open(t)
		echoCall(t, conn, br, "before the stop")
		stop()
		closedUnanswered(t, br)
	})
}

// TestFramedCallQueue: a framed call's frames wait in a queue for its
// recv, so the connection is read all the time; a full queue waits for
// the recv to take one (a burst of signals is not refused). After the
// call, what the client still sends is dropped, up to the request side's
// end.
func TestFramedCallQueue(t *testing.T) {
	ctx := t.Context()
	c := newFramedCall([]byte{0})
	for i := range agentpb.ExecFramesQueued {
		if closed, err := c.add(ctx, []byte{byte(i)}); closed || err != nil {
			t.Fatalf("frame %d: %v %v", i, closed, err)
		}
	}
	added := make(chan error, 1)
	go func() {
		_, err := c.add(ctx, []byte{0xff})
		added <- err
	}()
	select {
	case err := <-added:
		t.Fatalf("a frame more than the queue holds was added (%v) before one was taken", err)
	case <-time.After(50 * time.Millisecond):
	}
	if b, err := c.next(ctx); err != nil || b[0] != 0 {
		t.Fatalf("the first frame taken: %v %v", b, err)
	}
	if err := <-added; err != nil {
		t.Fatalf("the waiting frame: %v", err)
	}
	for i := 1; i <= agentpb.ExecFramesQueued; i++ {
		want := byte(i)
		if i == agentpb.ExecFramesQueued {
			want = 0xff
		}
		if b, err := c.next(ctx); err != nil || b[0] != want {
			t.Fatalf("frame %d taken: %v %v", i, b, err)
		}
	}
	close(c.done)
	if closed, err := c.add(ctx, []byte{1}); closed || err != nil {
		t.Fatalf("a frame after the call: %v %v, want it dropped", closed, err)
	}
	if closed, err := c.add(ctx, nil); !closed || err != nil {
		t.Fatalf("the end after the call: %v %v", closed, err)
	}
	if b, err := c.next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %v %v, want io.EOF", b, err)
	}
}

// TestExecFramesAbandonedQuietly: a framed call whose client left is
// seen by the agent's next send failing (EPIPE) as often as by its read
// of the connection; the send's failure ends the call as the read's
// does, without an answer and without a warning (as the byte path's
// abandoned writes are not logged), and kills the foreground process.
// The connection here fails every send after the upgrade's answer while
// its read waits, so the send always comes first.
func TestExecFramesAbandonedQuietly(t *testing.T) {
	var log testenv.Buffer
	srv, _, _ := serveAgent(t, Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&log, t.Output()), &slog.HandlerOptions{Level: slog.LevelWarn}))}, false)
	in, feed := io.Pipe()
	conn := &leftConn{in: in}
	b, err := proto.Marshal(&agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Start{Start: &agentpb.ProcessStart{Argv: []string{"sleep", "1000"}}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := agentpb.WriteFrame(feed, b); err != nil {
			t.Error(err)
		}
	}()
	r := httptest.NewRequest("POST", agentpb.ExecFramesPath, nil)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", agentpb.ExecFramesUpgrade)
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.serveExecFrames(hijacker{conn: conn}, r)
	}()
	select {
	case <-served: // the call ended
	case <-time.After(time.Minute):
		conn.Close()
		t.Fatal("a framed call whose sends fail did not end")
	}
	if n := conn.afterFailure.Load(); n != 0 {
		t.Errorf("%d writes after a send failed: the agent answered a client that left", n)
	}
	if strings.Contains(log.String(), "request failed") {
		t.Fatalf("an abandoned call was logged as the agent's failure:\n%s", log.String())
	}
	// The foreground process, killed when the call ended, leaves the
	// table once it is reaped; one left running would stay.
	testenv.WaitFor(t, "the abandoned call's foreground process killed", func() bool {
		return len(srv.procs.list()) == 0
	})
}

// leftConn is the agent's end of a connection whose client left: its
// reads take what the test feeds, and every write after the first (the
// upgrade's answer) fails as a send to a closed socket does.
type leftConn struct {
	net.Conn // only Read, Write and Close are used
	in       *io.PipeReader
	writes   atomic.Int32
	// afterFailure counts writes tried after one failed.
	afterFailure atomic.Int32
}

func (c *leftConn) Read(p []byte) (int, error) { return c.in.Read(p) }

func (c *leftConn) Write(p []byte) (int, error) {
	switch n := c.writes.Add(1); {
	case n == 1:
		return len(p), nil
	case n > 2:
		c.afterFailure.Add(1)
	}
	return 0, &net.OpError{Op: "write", Net: "unix", Err: os.NewSyscallError("write", syscall.EPIPE)}
}

func (c *leftConn) Close() error { return c.in.CloseWithError(net.ErrClosed) }

// hijacker is a ResponseWriter that hands conn over.
type hijacker struct {
	http.ResponseWriter
	conn net.Conn
}

func (h hijacker) Header() http.Header { return http.Header{} }

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return h.conn, bufio.NewReadWriter(bufio.NewReader(h.conn), bufio.NewWriter(h.conn)), nil
}
