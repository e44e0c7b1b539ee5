package shim

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/agentpb/agentpbconnect"
)

// startPortServer serves a Server in-process on a unix socket and returns a
// PortService client of it, and a function that shuts the server down (the
// test's end does too). Tests that use it must not run in parallel: a
// process has one reaper.
func startPortServer(t *testing.T) (agentpbconnect.PortServiceClient, func()) {
	t.Helper()
	_, c, stop := serveAgent(t, Options{}, true)
	return agentpbconnect.NewPortServiceClient(c, "http://agent"), stop
}

// listen opens a TCP listener on 127.0.0.1 whose connections serve runs
// on, closing each when serve returns; the listener and the connections
// still open are closed and their goroutines joined when the test ends.
func listen(t *testing.T, serve func(c *net.TCPConn)) *net.TCPListener {
	t.Helper()
	l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	conns := make(chan *net.TCPConn, 16)
	go func() {
		defer close(done)
		defer close(conns)
		for {
			c, err := l.AcceptTCP()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	served := make(chan struct{})
	go func() {
		defer close(served)
		var open []*net.TCPConn
		finished := make(chan struct{}, 16)
		for c := range conns {
			open = append(open, c)
			go func() {
				defer func() { finished <- struct{}{} }()
				serve(c)
				c.Close()
			}()
		}
		for _, c := range open {
			c.Close()
		}
		for range open {
			<-finished
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		<-served
	})
	return l
}

func portOf(l net.Listener) uint32 { return uint32(l.Addr().(*net.TCPAddr).Port) }

// reasonOf returns a Connect error's code and ErrorInfo reason.
func reasonOf(err error) (connect.Code, string) {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return connect.CodeUnknown, fmt.Sprint(err)
	}
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if info, ok := v.(*agentpb.ErrorInfo); ok {
				return ce.Code(), info.Reason
			}
		}
	}
	return ce.Code(), ""
}

type forwardStream = *connect.BidiStreamForClient[agentpb.ForwardRequest, agentpb.ForwardResponse]

// openForward starts a Forward to port on 127.0.0.1 and reads the
// Connected event.
func openForward(t *testing.T, ctx context.Context, c agentpbconnect.PortServiceClient, port uint32) forwardStream {
	t.Helper()
	return openForwardTo(t, ctx, c, port, "127.0.0.1:"+strconv.Itoa(int(port)))
}

// openForwardTo starts a Forward to port and checks that the agent
// connected to want.
func openForwardTo(t *testing.T, ctx context.Context, c agentpbconnect.PortServiceClient, port uint32, want string) forwardStream {
	t.Helper()
	s := c.Forward(ctx)
	t.Cleanup(func() {
		_ = s.CloseRequest()
		_ = s.CloseResponse()
	})
	if err := s.Send(&agentpb.ForwardRequest{Msg: &agentpb.ForwardRequest_Start{Start: &agentpb.ForwardStart{Port: port}}}); err != nil {
		t.Fatal(err)
	}
	msg, err := s.Receive()
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.GetConnected().GetAddress(); got != want {
		t.Fatalf("first event %v, want Connected to %s", msg, want)
	}
	return s
}

// sendAll sends data in chunks of at most portChunkSize, then close_write.
func sendAll(s forwardStream, data []byte) error {
	for off := 0; off < len(data); off += portChunkSize {
		end := min(off+portChunkSize, len(data))
		if err := s.Send(&agentpb.ForwardRequest{Msg: &agentpb.ForwardRequest_Data{Data: data[off:end]}}); err != nil {
			return err
		}
	}
	return s.Send(&agentpb.ForwardRequest{Msg: &agentpb.ForwardRequest_CloseWrite{CloseWrite: true}})
}

// receiveAll reads data events until the stream ends.
func receiveAll(s forwardStream) ([]byte, error) {
	var out []byte
	for {
		msg, err := s.Receive()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		d := msg.GetData()
		if d == nil {
			return out, fmt.Errorf("unexpected event %v", msg)
		}
		if len(d) > portChunkSize {
			return out, fmt.Errorf("a data event of %d bytes", len(d))
		}
		out = append(out, d...)
	}
}

// TestForward drives PortService.Forward against listeners the test opens
// on the loopback.
func TestForward(t *testing.T) {
	client, _ := startPortServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	t.Run("echo both ways", func(t *testing.T) {
		// The server echoes until end-of-file, then closes.
		l := listen(t, func(c *net.TCPConn) {
			// Not io.Copy(c, c): that splices a socket into itself.
			buf := make([]byte, 8192)
			for {
				n, err := c.Read(buf)
				if _, werr := c.Write(buf[:n]); err != nil || werr != nil {
					return
				}
			}
		})
		data := make([]byte, 1<<20)
		rand.Read(data)
		s := openForward(t, ctx, client, portOf(l))
		sent := make(chan error, 1)
		go func() { sent <- sendAll(s, data) }()
		got, err := receiveAll(s)
		if serr := <-sent; serr != nil {
			t.Fatalf("send: %v", serr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("echoed %d bytes, not the %d sent", len(got), len(data))
		}
	})

	t.Run("half-close", func(t *testing.T) {
		// The server reads to end-of-file, then answers on the same
		// connection.
		l := listen(t, func(c *net.TCPConn) {
			b, err := io.ReadAll(c)
			if err != nil {
				return
			}
			fmt.Fprintf(c, "read %q", b)
		})
		s := openForward(t, ctx, client, portOf(l))
		if err := sendAll(s, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		got, err := receiveAll(s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != `read "hello"` {
			t.Fatalf("got %q", got)
		}
	})

	t.Run("end of request stream half-closes", func(t *testing.T) {
		l := listen(t, func(c *net.TCPConn) {
			b, _ := io.ReadAll(c)
			fmt.Fprintf(c, "%d", len(b))
		})
		s := openForward(t, ctx, client, portOf(l))
		if err := s.Send(&agentpb.ForwardRequest{Msg: &agentpb.ForwardRequest_Data{Data: []byte("abc")}}); err != nil {
			t.Fatal(err)
		}
		if err := s.CloseRequest(); err != nil {
			t.Fatal(err)
		}
		if got, err := receiveAll(s); err != nil || string(got) != "3" {
			t.Fatalf("got %q, %v", got, err)
		}
	})

	t.Run("sandbox side closes first", func(t *testing.T) {
		l := listen(t, func(c *net.TCPConn) { c.Write([]byte("bye")) })
		s := openForward(t, ctx, client, portOf(l))
		if got, err := receiveAll(s); err != nil || string(got) != "bye" {
			t.Fatalf("got %q, %v", got, err)
		}
	})

	t.Run("cancelling the call closes the connection", func(t *testing.T) {
		ended := make(chan error, 1)
		l := listen(t, func(c *net.TCPConn) {
			c.Write([]byte("hi"))
			_, err := io.Copy(io.Discard, c)
			ended <- err
		})
		cctx, ccancel := context.WithCancel(ctx)
		defer ccancel()
		s := openForward(t, cctx, client, portOf(l))
		if msg, err := s.Receive(); err != nil || string(msg.GetData()) != "hi" {
			t.Fatalf("got %v, %v", msg, err)
		}
		ccancel()
		_ = s.CloseRequest() // the transport notices the cancel once the request side ends
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatal("the sandbox side's connection is still open")
		}
	})

	t.Run("IPv6 loopback when nothing listens on IPv4", func(t *testing.T) {
		l6, err := net.ListenTCP("tcp6", &net.TCPAddr{IP: net.IPv6loopback})
		if err != nil {
			t.Skipf("no IPv6 loopback: %v", err)
		}
		defer l6.Close()
		accepted := make(chan error, 1)
		go func() {
			c, err := l6.Accept()
			if err == nil {
				_, err = c.Write([]byte("six"))
				c.Close()
			}
			accepted <- err
		}()
		port := portOf(l6)
		// The same port on IPv4 must be free for the fallback to be taken.
		if l4, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))); err != nil {
			t.Skipf("port %d is taken on IPv4", port)
		} else {
			l4.Close()
		}
		s := openForwardTo(t, ctx, client, port, "[::1]:"+strconv.Itoa(int(port)))
		if got, err := receiveAll(s); err != nil || string(got) != "six" {
			t.Fatalf("got %q, %v", got, err)
		}
		if err := <-accepted; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		closed, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		free := portOf(closed)
		closed.Close()
		// The sandbox side stays open, so that only the protocol error
		// can end the call.
		hold := make(chan struct{})
		open := listen(t, func(c *net.TCPConn) { <-hold })
		t.Cleanup(func() { close(hold) })
		start := func(port uint32) *agentpb.ForwardRequest {
			return &agentpb.ForwardRequest{Msg: &agentpb.ForwardRequest_Start{Start: &agentpb.ForwardStart{Port: port}}}
		}
		data := func(n int) *agentpb.ForwardRequest {
			return &agentpb.ForwardRequest{Msg: &agentpb.ForwardRequest_Data{Data: make([]byte, n)}}
		}
		closeWrite := &agentpb.ForwardRequest{Msg: &agentpb.ForwardRequest_CloseWrite{CloseWrite: true}}
		tests := []struct {
			name   string
			msgs   []*agentpb.ForwardRequest
			code   connect.Code
			reason string
		}{
			{"not listening", []*agentpb.ForwardRequest{start(free)}, connect.CodeUnavailable, "port_not_listening"},
			{"port 0", []*agentpb.ForwardRequest{start(0)}, connect.CodeInvalidArgument, "invalid_port"},
			{"port 65536", []*agentpb.ForwardRequest{start(65536)}, connect.CodeInvalidArgument, "invalid_port"},
			{"no start", []*agentpb.ForwardRequest{data(1)}, connect.CodeInvalidArgument, "missing_start"},
			{"nothing", nil, connect.CodeInvalidArgument, "missing_start"},
			{"second start", []*agentpb.ForwardRequest{start(portOf(open)), start(portOf(open))}, connect.CodeInvalidArgument, "duplicate_start"},
			{"chunk too large", []*agentpb.ForwardRequest{start(portOf(open)), data(portChunkSize + 1)}, connect.CodeInvalidArgument, "chunk_too_large"},
			{"data after close_write", []*agentpb.ForwardRequest{start(portOf(open)), closeWrite, data(1)}, connect.CodeInvalidArgument, "write_after_close"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := client.Forward(ctx)
				defer s.CloseResponse()
				for _, m := range tt.msgs {
					_ = s.Send(m)
				}
				if len(tt.msgs) == 0 {
					_ = s.Send(nil) // only the request's headers
				}
				_ = s.CloseRequest()
				var err error
				for err == nil {
					_, err = s.Receive()
				}
				if code, reason := reasonOf(err); code != tt.code || reason != tt.reason {
					t.Fatalf("got %v (%v, %q), want %v %q", err, code, reason, tt.code, tt.reason)
				}
			})
		}
	})
}

// TestForwardEndsAtShutdown: a forward open when the server shuts down
// ends with "shutting_down", and its connection is closed.
func TestForwardEndsAtShutdown(t *testing.T) {
	client, stop := startPortServer(t)
	ended := make(chan error, 1)
	l := listen(t, func(c *net.TCPConn) {
		_, err := io.Copy(io.Discard, c)
		ended <- err
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s := openForward(t, ctx, client, portOf(l))
	stop()
	_, err := s.Receive()
	if code, reason := reasonOf(err); code != connect.CodeUnavailable || reason != "shutting_down" {
		t.Fatalf("got %v (%v, %q), want unavailable shutting_down", err, code, reason)
	}
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("the sandbox side's connection is still open")
	}
}

// TestListPorts: the listener the test opens is listed with this process's
// pid and command.
func TestListPorts(t *testing.T) {
	client, _ := startPortServer(t)
	l := listen(t, func(c *net.TCPConn) {})
	res, err := client.List(t.Context(), connect.NewRequest(&agentpb.ListPortsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	var found *agentpb.ListeningPort
	for i, p := range res.Msg.Ports {
		if i > 0 && res.Msg.Ports[i-1].Port > p.Port {
			t.Errorf("ports out of order: %d before %d", res.Msg.Ports[i-1].Port, p.Port)
		}
		if p.Port == portOf(l) && p.Address == "127.0.0.1" {
			found = p
		}
	}
	if found == nil {
		t.Fatalf("port %d is not listed in %v", portOf(l), res.Msg.Ports)
	}
	if int(found.Pid) != os.Getpid() || found.Command != strings.TrimSpace(string(comm)) {
		t.Fatalf("listener %v, want pid %d command %q", found, os.Getpid(), strings.TrimSpace(string(comm)))
	}
}

func TestParseListeners(t *testing.T) {
	// A table as the kernel writes it (x86, little-endian words), with a
	// connected socket (01) that is not listed.
	tcp := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0
   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 17 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 99 1 0000000000000000 20 4 30 10 -1
   3: garbage
`
	tcp6 := `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31337 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 100 0 0 10 0
`
	type row struct {
		port  uint32
		addr  string
		inode uint64
	}
	collect := func(table string) []row {
		var out []row
		for p, inode := range parseListeners([]byte(table)) {
			out = append(out, row{p.Port, p.Address, inode})
		}
		return out
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the fixture is a little-endian kernel's")
	}
	want := []row{{8080, "127.0.0.1", 4242}, {22, "0.0.0.0", 17}}
	if got := collect(tcp); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tcp: got %v, want %v", got, want)
	}
	want = []row{{3000, "::1", 31337}, {80, "::", 0}}
	if got := collect(tcp6); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tcp6: got %v, want %v", got, want)
	}
}
