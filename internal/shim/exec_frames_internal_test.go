package shim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestExecFramesProtocol plays Exec's framed path on the wire: a request
// that is no upgrade, the environment's mark in the upgrade's answer,
// calls in turn on one connection (stdin in frames among them), calls
// refused before their start (no start, a first frame that is no message)
// after which the connection carries the next call, a connection closed
// within a call, which kills its foreground process, and the server's stop,
// which closes a kept connection.
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
		return &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Start{Start: &agentpb.ProcessStart{Argv: argv, Stdin: true}}}
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
	catCall := func(t *testing.T, conn net.Conn, br *bufio.Reader, in string) {
		t.Helper()
		send(t, conn, start("cat"))
		send(t, conn, &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Stdin{Stdin: []byte(in)}})
		send(t, conn, &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_CloseStdin{CloseStdin: true}})
		events, refusal := answer(t, br)
		endRequests(t, conn)
		out, exit := output(events)
		if refusal != nil || exit == nil || exit.ExitCode != 0 || out != in || events[0].GetStarted() == nil {
			t.Fatalf("cat: %q, exit %v, refused %v, first %v", out, exit, refusal, events[0])
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
			catCall(t, conn, br, fmt.Sprintf("call %d\n", i))
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
		send(t, conn, &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_CloseStdin{CloseStdin: true}})
		wantRefused(t, br, "missing_start")
		endRequests(t, conn)
		catCall(t, conn, br, "after the refusals\n")
	})
	t.Run("closed within a call", func(t *testing.T) {
		conn, br, _ := open(t)
		send(t, conn, start("sleep", "1000"))
		b, err := agentpb.ReadFrame(br, agentpb.ExecFrameMax+1)
		if err != nil {
			t.Fatal(err)
		}
		m := new(agentpb.ExecResponse)
		if err := proto.Unmarshal(b[1:], m); err != nil || m.GetStarted() == nil {
			t.Fatalf("first frame %q: %v", b, err)
		}
		pid := int(m.GetStarted().GetPid())
		conn.Close()
		testenv.WaitFor(t, "the foreground process killed", func() bool {
			return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
		})
	})
	t.Run("a kept connection closed by the server's stop", func(t *testing.T) {
		conn, br, _ := open(t)
		catCall(t, conn, br, "before the stop\n")
		stop()
		// Closed with the call's last frame perhaps unread: a reset.
		if _, err := agentpb.ReadFrame(br, agentpb.ExecFrameMax+1); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("got %v, want the connection closed", err)
		}
	})
}
