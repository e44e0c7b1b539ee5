package agentconn

import (
	"context"
	"errors"
	"io"
	"math"
	"sync"
	"syscall"
	"time"

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
	// Scope labels the terminal (the control plane: its runtime's id);
	// AttachTerminal must give the same.
	Scope string
	// MaxTerminals bounds the terminals of Scope the agent keeps at once,
	// this one included: attached, or detached in their grace, until each
	// is forgotten (its exit reported, closed, or its grace over). Over it
	// Terminal fails with too_many_terminals (resource exhausted); a
	// re-attach takes no other place. 0: no bound.
	MaxTerminals int
}

// TerminalStream is an open terminal: Read its output, Write its input.
// Read (and Offset) must not be called concurrently with themselves; the
// other methods may be.
//
// A terminal outlives a call that breaks: when the context ends or the
// link to the agent drops, or on Detach, the agent keeps the terminal for
// its grace period (see the agent protocol's TerminalService), and
// AttachTerminal re-attaches it. Close ends it at once.
type TerminalStream struct {
	c      *Client
	id     string
	termID string
	pid    int
	stream *connect.BidiStreamForClient[agentpb.TerminalRequest, agentpb.TerminalResponse]
	cancel context.CancelFunc
	// stopWatch stops ending the request side when the context ends.
	stopWatch func() bool

	// The pump receives the responses into events until the call ends; it
	// drops them once stop is closed, and closes pumped when it returns
	// (its last event is the call's end, endErr).
	events chan termEvent
	stop   chan struct{}
	pumped chan struct{}
	endErr error

	sendMu    sync.Mutex
	closeOnce sync.Once
	buf       []byte
	off       int64 // offset of buf's end: past what Read returned
	exit      *ExitStatus
	err       error
	lost      int64
}

// termEvent is one response, or the end of the call.
type termEvent struct {
	msg *agentpb.TerminalResponse
	err error
}

// closeWait bounds how long Close waits for the agent to report the end of
// a terminal it closed.
const closeWait = 10 * time.Second

var _ io.ReadWriteCloser = (*TerminalStream)(nil)

// Terminal opens a terminal session. Closing the stream ends the session
// (its process group is killed).
func (c *Client) Terminal(ctx context.Context, req TerminalRequest) (*TerminalStream, error) {
	if req.Rows < 0 || req.Cols < 0 || req.Rows > 0xffff || req.Cols > 0xffff {
		return nil, errdefs.InvalidArgument("invalid_size", "terminal size %dx%d is out of range", req.Rows, req.Cols)
	}
	if req.MaxTerminals < 0 || req.MaxTerminals > math.MaxUint32 {
		return nil, errdefs.InvalidArgument("invalid_limit", "at most %d terminals is out of range", req.MaxTerminals)
	}
	return c.openTerminal(ctx, &agentpb.TerminalRequest{Msg: &agentpb.TerminalRequest_Start{Start: &agentpb.TerminalStart{
		Argv: req.Argv, Env: req.Env, Cwd: req.Cwd,
		Rows: uint32(req.Rows), Cols: uint32(req.Cols), Term: req.Term, User: req.User, Scope: req.Scope,
		MaxTerminals: uint32(req.MaxTerminals),
	}}})
}

// AttachTerminal re-attaches the terminal with the given terminal id (see
// TerminalStream.TerminalID) and scope (TerminalRequest.Scope) whose call
// ended, replaying its output from
// offset (Offset says where the replay starts: offset, or the oldest byte
// the agent still keeps). A session still attached elsewhere is taken
// over: its Read fails with terminal_attached_elsewhere. An id the agent
// does not know, or knows in another scope, fails with terminal_not_found
// (not found); an offset past
// the output with invalid_offset.
func (c *Client) AttachTerminal(ctx context.Context, scope, terminalID string, offset int64) (*TerminalStream, error) {
	if terminalID == "" || offset < 0 {
		return nil, errdefs.InvalidArgument("invalid_attach", "a terminal id and an offset of at least 0 are needed to re-attach")
	}
	return c.openTerminal(ctx, &agentpb.TerminalRequest{Msg: &agentpb.TerminalRequest_Attach{Attach: &agentpb.TerminalAttach{
		TerminalId: terminalID, Offset: offset, Scope: scope,
	}}})
}

// openTerminal makes a terminal call whose first message is first.
func (c *Client) openTerminal(ctx context.Context, first *agentpb.TerminalRequest) (*TerminalStream, error) {
	sctx, cancel := context.WithCancel(ctx)
	stream := c.term.Open(sctx)
	t := &TerminalStream{c: c, stream: stream, cancel: cancel,
		events: make(chan termEvent), stop: make(chan struct{}), pumped: make(chan struct{})}
	// As for Exec: the request side ends with the context, or a blocked
	// Read would not notice it.
	t.stopWatch = context.AfterFunc(sctx, t.closeRequest)
	_ = stream.Send(first)
	msg, err := stream.Receive()
	if err == nil && msg.GetStarted() == nil {
		err = protocolError("first terminal event is %T, not Started", msg.GetEvent())
	}
	if err != nil {
		close(t.pumped)
		t.Detach()
		if errors.Is(err, io.EOF) {
			return nil, protocolError("terminal ended before it started")
		}
		return nil, mapError(err)
	}
	st := msg.GetStarted()
	t.id, t.pid, t.termID, t.off = st.Id, int(st.Pid), st.TerminalId, st.Offset
	go t.pump()
	return t, nil
}

// pump receives the call's responses until it ends.
func (t *TerminalStream) pump() {
	defer close(t.pumped)
	for {
		msg, err := t.stream.Receive()
		if err != nil {
			t.endErr = err
		}
		select {
		case t.events <- termEvent{msg: msg, err: err}:
		case <-t.stop:
		}
		if err != nil {
			return
		}
	}
}

// ID returns the terminal process's id in the agent.
func (t *TerminalStream) ID() string { return t.id }

// TerminalID returns the id to re-attach the terminal by.
func (t *TerminalStream) TerminalID() string { return t.termID }

// PID returns the terminal process's pid in the sandbox.
func (t *TerminalStream) PID() int { return t.pid }

// Offset returns the offset in the terminal's output of the next byte Read
// returns: where a re-attach should replay from.
func (t *TerminalStream) Offset() int64 { return t.off - int64(len(t.buf)) }

// Read reads the terminal's output. It returns io.EOF once the terminal's
// process has exited and its output is read; see Exit.
func (t *TerminalStream) Read(p []byte) (int, error) {
	for len(t.buf) == 0 {
		if t.err != nil {
			return 0, t.err
		}
		var ev termEvent
		select {
		case ev = <-t.events:
		case <-t.stop:
			t.err = errdefs.Unavailable("agent_unavailable", "the terminal stream is closed")
			continue
		}
		if ev.err != nil {
			switch {
			case errors.Is(ev.err, io.EOF) && t.exit != nil:
				t.err = io.EOF
			case errors.Is(ev.err, io.EOF):
				t.err = protocolError("terminal ended before its process exited")
			default:
				t.err = mapError(ev.err)
			}
			continue
		}
		switch e := ev.msg.GetEvent().(type) {
		case *agentpb.TerminalResponse_Output:
			t.buf = e.Output.Data
			t.off = e.Output.Offset + int64(len(e.Output.Data))
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

// Kill ends the terminal: the agent kills its process group, and Read
// reports the exit.
func (t *TerminalStream) Kill() error {
	return t.send(&agentpb.TerminalRequest{Msg: &agentpb.TerminalRequest_Close{Close: true}})
}

// Close ends the session; a process still running is killed: through the
// call while it lasts, else with a signal on a call of its own.
func (t *TerminalStream) Close() error {
	t.closeOnce.Do(func() {
		_ = t.Kill()
		t.closeRequest()
		close(t.stop)
		// The agent kills the process and reports its exit, then ends
		// the call; ending the call first could lose the close.
		timer := time.NewTimer(closeWait)
		select {
		case <-t.pumped:
		case <-timer.C:
		}
		timer.Stop()
		t.end()
		<-t.pumped
		// A call that ended cleanly reported the exit or carried out the
		// close; otherwise the close may not have reached the agent.
		if !errors.Is(t.endErr, io.EOF) {
			ctx, cancel := context.WithTimeout(context.Background(), closeWait)
			defer cancel()
			_ = t.c.Signal(ctx, t.id, syscall.SIGKILL, false)
		}
	})
	return nil
}

// Detach ends the call and leaves the terminal running, for AttachTerminal
// to re-attach within the agent's grace.
func (t *TerminalStream) Detach() {
	t.closeOnce.Do(func() {
		close(t.stop)
		t.end()
		<-t.pumped
	})
}

// end ends the call.
func (t *TerminalStream) end() {
	t.stopWatch()
	t.cancel()
	_ = t.stream.CloseResponse()
}

func (t *TerminalStream) closeRequest() {
	t.sendMu.Lock()
	defer t.sendMu.Unlock()
	_ = t.stream.CloseRequest()
}
