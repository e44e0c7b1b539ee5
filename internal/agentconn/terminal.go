package agentconn

import (
	"context"
	"errors"
	"io"
	"sync"
	"syscall"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// TerminalRequest describes an interactive terminal session.
type TerminalRequest struct {
	// Argv is the command; empty means the sandbox's $SHELL, or /bin/sh.
	Argv       []string
	Env        map[string]string
	Cwd        string
	Rows, Cols int    // 0 means 24x80
	Term       string // TERM; empty means xterm-256color
	User       string // as ExecRequest.User
}

// TerminalStream is an open terminal: Read its output, Write its input.
// Read must not be called concurrently with itself; the other methods may.
type TerminalStream struct {
	id     string
	pid    int
	stream *connect.BidiStreamForClient[agentpb.TerminalRequest, agentpb.TerminalResponse]
	cancel context.CancelFunc
	// stopWatch stops ending the request side when the context ends.
	stopWatch func() bool

	sendMu    sync.Mutex
	closeOnce sync.Once
	buf       []byte
	exit      *ExitStatus
	err       error
	lost      int64
}

var _ io.ReadWriteCloser = (*TerminalStream)(nil)

// Terminal opens a terminal session. Closing the stream ends the session
// (its process group is killed).
func (c *Client) Terminal(ctx context.Context, req TerminalRequest) (*TerminalStream, error) {
	if req.Rows < 0 || req.Cols < 0 || req.Rows > 0xffff || req.Cols > 0xffff {
		return nil, errdefs.InvalidArgument("invalid_size", "terminal size %dx%d is out of range", req.Rows, req.Cols)
	}
	sctx, cancel := context.WithCancel(ctx)
	stream := c.term.Open(sctx)
	t := &TerminalStream{stream: stream, cancel: cancel}
	// As for Exec: the request side ends with the context, or a blocked
	// Read would not notice it.
	t.stopWatch = context.AfterFunc(sctx, t.closeRequest)
	_ = stream.Send(&agentpb.TerminalRequest{Msg: &agentpb.TerminalRequest_Start{Start: &agentpb.TerminalStart{
		Argv: req.Argv, Env: req.Env, Cwd: req.Cwd,
		Rows: uint32(req.Rows), Cols: uint32(req.Cols), Term: req.Term, User: req.User,
	}}})
	msg, err := stream.Receive()
	if err != nil {
		t.Close()
		if errors.Is(err, io.EOF) {
			return nil, protocolError("terminal ended before it started")
		}
		return nil, mapError(err)
	}
	st := msg.GetStarted()
	if st == nil {
		t.Close()
		return nil, protocolError("first terminal event is %T, not Started", msg.GetEvent())
	}
	t.id, t.pid = st.Id, int(st.Pid)
	return t, nil
}

// ID returns the terminal process's id in the agent.
func (t *TerminalStream) ID() string { return t.id }

// PID returns the terminal process's pid in the sandbox.
func (t *TerminalStream) PID() int { return t.pid }

// Read reads the terminal's output. It returns io.EOF once the terminal's
// process has exited and its output is read; see Exit.
func (t *TerminalStream) Read(p []byte) (int, error) {
	for len(t.buf) == 0 {
		if t.err != nil {
			return 0, t.err
		}
		msg, err := t.stream.Receive()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF) && t.exit != nil:
				t.err = io.EOF
			case errors.Is(err, io.EOF):
				t.err = protocolError("terminal ended before its process exited")
			default:
				t.err = mapError(err)
			}
			continue
		}
		switch e := msg.GetEvent().(type) {
		case *agentpb.TerminalResponse_Output:
			t.buf = e.Output.Data
		case *agentpb.TerminalResponse_Lost:
			t.lost += e.Lost.Bytes
		case *agentpb.TerminalResponse_Exited:
			t.exit = exitStatus(e.Exited)
		}
	}
	n := copy(p, t.buf)
	t.buf = t.buf[n:]
	return n, nil
}

// Exit returns how the terminal's process ended, once Read has returned
// io.EOF.
func (t *TerminalStream) Exit() (ExitStatus, bool) {
	if t.exit == nil {
		return ExitStatus{}, false
	}
	return *t.exit, true
}

func (t *TerminalStream) send(m *agentpb.TerminalRequest) error {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	if err := t.stream.Send(m); err != nil {
		return errdefs.Unavailable("agent_unavailable", "the terminal has ended").WithCause(err)
	}
	return nil
}

// Write sends input to the terminal.
func (t *TerminalStream) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += chunkSize {
		end := min(off+chunkSize, len(p))
		if err := t.send(&agentpb.TerminalRequest{Msg: &agentpb.TerminalRequest_Input{Input: p[off:end]}}); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

// Resize changes the terminal's size.
func (t *TerminalStream) Resize(rows, cols int) error {
	if rows <= 0 || cols <= 0 || rows > 0xffff || cols > 0xffff {
		return errdefs.InvalidArgument("invalid_size", "terminal size %dx%d is out of range", rows, cols)
	}
	return t.send(&agentpb.TerminalRequest{Msg: &agentpb.TerminalRequest_Resize{Resize: &agentpb.Resize{Rows: uint32(rows), Cols: uint32(cols)}}})
}

// Signal sends sig to the terminal's process group.
func (t *TerminalStream) Signal(sig syscall.Signal) error {
	ps, err := toSignal(sig)
	if err != nil {
		return err
	}
	return t.send(&agentpb.TerminalRequest{Msg: &agentpb.TerminalRequest_Signal{Signal: ps}})
}

// Close ends the session; a process still running is killed.
func (t *TerminalStream) Close() error {
	t.closeOnce.Do(func() {
		t.stopWatch()
		t.cancel()
		t.closeRequest()
		_ = t.stream.CloseResponse()
	})
	return nil
}

func (t *TerminalStream) closeRequest() {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	_ = t.stream.CloseRequest()
}
