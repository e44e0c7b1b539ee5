package agentconn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// ExecRequest describes a process to start.
type ExecRequest struct {
	// Argv is the command; Argv[0] is looked up in the process's PATH.
	Argv []string
	// Env is added to the agent's environment, or replaces it with ClearEnv.
	Env      map[string]string
	ClearEnv bool
	// Cwd is the working directory (absolute); empty means the agent's.
	Cwd string
	// User is the account to run as ("user" or "root"); empty means the
	// agent's default.
	User string
	// Stdin, if set, is copied to the process's stdin, which is then closed.
	Stdin io.Reader
	// OpenStdin gives the process a stdin pipe written with ExecStream.Write
	// and closed with ExecStream.CloseStdin. Without it or Stdin, stdin is
	// /dev/null.
	OpenStdin bool
	// Timeout kills the process group once passed; 0 means none.
	Timeout time.Duration
	// Background keeps the process running after the call ends; it can be
	// re-attached by id.
	Background bool
	// PTY runs the process on a pseudo-terminal (output arrives as Stdout).
	PTY *PTY
}

// PTY is the size and type of a pseudo-terminal; zero values mean 24x80
// and xterm-256color.
type PTY struct {
	Rows, Cols int
	Term       string
}

// Stream names an output stream.
type Stream int

// The output streams.
const (
	Stdout Stream = 1
	Stderr Stream = 2
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return "unknown"
}

// ExitStatus is how a process ended.
type ExitStatus struct {
	Code     int    // exit status; -1 when a signal ended it
	Signal   string // e.g. "SIGKILL"; empty if none
	TimedOut bool   // killed because its timeout passed
	// OOMKilled: the kernel's OOM killer ended it (see the agent's Exited).
	OOMKilled bool
	ExitedAt  time.Time
	// Bytes each stream produced in total.
	StdoutBytes, StderrBytes int64
}

// Event is one thing that happened to a process, in order.
type Event struct {
	// Output and loss: the stream, and the offset in it of Data's first
	// byte (or of the first lost byte).
	Stream Stream
	Offset int64
	Data   []byte
	// Lost, when non-zero, is the number of bytes dropped from the agent's
	// buffer at Offset before this client could read them.
	Lost int64
	// Exit is set on the last event.
	Exit *ExitStatus
}

// Offsets are positions in a process's output streams.
type Offsets struct {
	Stdout, Stderr int64
}

var signals = map[syscall.Signal]agentpb.Signal{
	syscall.SIGHUP:   agentpb.Signal_SIGNAL_HUP,
	syscall.SIGINT:   agentpb.Signal_SIGNAL_INT,
	syscall.SIGQUIT:  agentpb.Signal_SIGNAL_QUIT,
	syscall.SIGKILL:  agentpb.Signal_SIGNAL_KILL,
	syscall.SIGUSR1:  agentpb.Signal_SIGNAL_USR1,
	syscall.SIGUSR2:  agentpb.Signal_SIGNAL_USR2,
	syscall.SIGTERM:  agentpb.Signal_SIGNAL_TERM,
	syscall.SIGCONT:  agentpb.Signal_SIGNAL_CONT,
	syscall.SIGSTOP:  agentpb.Signal_SIGNAL_STOP,
	syscall.SIGTSTP:  agentpb.Signal_SIGNAL_TSTP,
	syscall.SIGWINCH: agentpb.Signal_SIGNAL_WINCH,
}

func toSignal(sig syscall.Signal) (agentpb.Signal, error) {
	s, ok := signals[sig]
	if !ok {
		return 0, errdefs.InvalidArgument("invalid_signal", "signal %d cannot be sent", int(sig))
	}
	return s, nil
}

func ptyMessage(p *PTY) (*agentpb.Pty, error) {
	if p == nil {
		return nil, nil
	}
	if p.Rows < 0 || p.Cols < 0 || p.Rows > 0xffff || p.Cols > 0xffff {
		return nil, errdefs.InvalidArgument("invalid_size", "terminal size %dx%d is out of range", p.Rows, p.Cols)
	}
	return &agentpb.Pty{Rows: uint32(p.Rows), Cols: uint32(p.Cols), Term: p.Term}, nil
}

// ExecStream is a running Exec (or Attach) call: the process's events,
// and its stdin, signals and resizes. Recv and Wait must not be called
// concurrently with each other; the other methods may be.
type ExecStream struct {
	id     string
	pid    int
	cancel context.CancelFunc
	recv   func() (*agentpb.ExecResponse, error)
	send   func(*agentpb.ExecRequest) error // nil for Attach
	closeS func() error                     // half-closes the request side
	closeR func() error                     // releases the response side

	replay bool // from Replay: may end without an exit
	// stopWatch stops ending the request side when the context ends.
	stopWatch func() bool

	sendMu    sync.Mutex
	sendDone  bool
	closeOnce sync.Once
	exit      *ExitStatus
	lost      [2]int64
}

// Exec starts a process and returns once the agent has started it (or
// refused: a missing command is an errdefs.ErrNotFound with the code
// "command_not_found"). The caller must Wait for it or Close the stream;
// closing it before the process exits kills a foreground process. A call
// without stdin or a terminal goes by the framed path where it can, the
// others by ProcessService.Exec; the two behave alike.
func (c *Client) Exec(ctx context.Context, req ExecRequest) (*ExecStream, error) {
	if len(req.Argv) == 0 {
		return nil, errdefs.InvalidArgument("invalid_command", "argv is empty")
	}
	if req.Stdin != nil && req.OpenStdin {
		return nil, errdefs.InvalidArgument("invalid_stdin", "Stdin and OpenStdin are exclusive")
	}
	if req.Timeout < 0 {
		return nil, errdefs.InvalidArgument("invalid_timeout", "timeout must not be negative")
	}
	pty, err := ptyMessage(req.PTY)
	if err != nil {
		return nil, err
	}
	start := &agentpb.ProcessStart{
		Argv:       req.Argv,
		Env:        req.Env,
		ClearEnv:   req.ClearEnv,
		Cwd:        req.Cwd,
		User:       req.User,
		Stdin:      req.Stdin != nil || req.OpenStdin,
		TimeoutMs:  req.Timeout.Milliseconds(),
		Background: req.Background,
		Pty:        pty,
	}
	if req.Timeout > 0 && start.TimeoutMs == 0 {
		start.TimeoutMs = 1
	}
	msg := &agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Start{Start: start}}
	var es *ExecStream
	served := false
	if !start.Stdin && start.Pty == nil {
		es, served, err = c.execFramed(ctx, msg)
	}
	if !served {
		es, err = c.execStream(ctx, msg)
	}
	if err != nil {
		return nil, err
	}
	if req.Stdin != nil {
		// The copy ends at the reader's EOF or at its first read after the
		// call ends.
		go es.copyStdin(req.Stdin)
	}
	return es, nil
}

// execStream starts a call on ProcessService.Exec.
func (c *Client) execStream(ctx context.Context, start *agentpb.ExecRequest) (*ExecStream, error) {
	sctx, cancel := context.WithCancel(ctx)
	stream := c.proc.Exec(sctx)
	es := &ExecStream{
		cancel: cancel,
		recv:   stream.Receive,
		send:   stream.Send,
		closeS: stream.CloseRequest,
		closeR: stream.CloseResponse,
	}
	// The HTTP/2 transport reads the request side, a pipe, and notices a
	// cancelled context only once that pipe ends: a receive blocked on a
	// silent process would wait for ever. So the pipe ends with the
	// context, and the call with it (the agent then kills a foreground
	// process).
	es.stopWatch = context.AfterFunc(sctx, es.closeSend)
	// A send error is only EOF; the reason comes from the receive below.
	// The request side stays open for signals and resizes until Close.
	_ = stream.Send(start)
	if err := es.started(); err != nil {
		return nil, err
	}
	return es, nil
}

// Attach follows a process's output from the given offsets until it exits
// (output the agent no longer holds is reported as Lost). Closing the
// stream does not affect the process.
func (c *Client) Attach(ctx context.Context, id string, from Offsets) (*ExecStream, error) {
	return c.attach(ctx, &agentpb.AttachRequest{Id: id, StdoutOffset: from.Stdout, StderrOffset: from.Stderr})
}

// Replay returns what the agent still holds of a process's output from the
// given offsets, without following it; the stream ends after the buffered
// output (and the exit, if the process has exited).
func (c *Client) Replay(ctx context.Context, id string, from Offsets) (*ExecStream, error) {
	return c.attach(ctx, &agentpb.AttachRequest{Id: id, StdoutOffset: from.Stdout, StderrOffset: from.Stderr, NoFollow: true})
}

func (c *Client) attach(ctx context.Context, req *agentpb.AttachRequest) (*ExecStream, error) {
	if req.StdoutOffset < 0 || req.StderrOffset < 0 {
		return nil, errdefs.InvalidArgument("invalid_offset", "offsets must not be negative")
	}
	sctx, cancel := context.WithCancel(ctx)
	stream, err := c.proc.Attach(sctx, connect.NewRequest(req))
	if err != nil {
		cancel()
		return nil, mapError(err)
	}
	es := &ExecStream{
		cancel: cancel,
		recv: func() (*agentpb.ExecResponse, error) {
			if stream.Receive() {
				return stream.Msg(), nil
			}
			if err := stream.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		},
		closeR: stream.Close,
		replay: req.NoFollow,
	}
	if err := es.started(); err != nil {
		return nil, err
	}
	return es, nil
}

// started reads the Started event.
func (s *ExecStream) started() error {
	msg, err := s.recv()
	if err != nil {
		s.Close()
		if errors.Is(err, io.EOF) {
			return protocolError("call ended before the process started")
		}
		return mapError(err)
	}
	st := msg.GetStarted()
	if st == nil {
		s.Close()
		return protocolError("first event is %T, not Started", msg.GetEvent())
	}
	s.id, s.pid = st.Id, int(st.Pid)
	return nil
}

// ID returns the process's id in the agent.
func (s *ExecStream) ID() string { return s.id }

// PID returns the process's pid in the sandbox.
func (s *ExecStream) PID() int { return s.pid }

// Lost returns how many output bytes were dropped before this stream could
// read them.
func (s *ExecStream) Lost() (stdout, stderr int64) { return s.lost[0], s.lost[1] }

func (s *ExecStream) sendMsg(m *agentpb.ExecRequest) error {
	if s.send == nil {
		return errdefs.FailedPrecondition("not_interactive", "an attached stream cannot send input; use Client.WriteStdin")
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.sendDone {
		return errdefs.FailedPrecondition("stdin_closed", "stdin is closed")
	}
	if err := s.send(m); err != nil {
		return errdefs.Unavailable("agent_unavailable", "the call has ended").WithCause(err)
	}
	return nil
}

func (s *ExecStream) closeSend() {
	if s.closeS == nil {
		return
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if !s.sendDone {
		s.sendDone = true
		_ = s.closeS()
	}
}

// Write writes to the process's stdin (ExecRequest.OpenStdin, or a PTY).
func (s *ExecStream) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += chunkSize {
		end := min(off+chunkSize, len(p))
		if err := s.sendMsg(&agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Stdin{Stdin: p[off:end]}}); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

// CloseStdin closes the process's stdin (on a PTY: sends end-of-file).
func (s *ExecStream) CloseStdin() error {
	return s.sendMsg(&agentpb.ExecRequest{Msg: &agentpb.ExecRequest_CloseStdin{CloseStdin: true}})
}

// Signal sends sig to the process's group.
func (s *ExecStream) Signal(sig syscall.Signal) error {
	ps, err := toSignal(sig)
	if err != nil {
		return err
	}
	return s.sendMsg(&agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Signal{Signal: ps}})
}

// Resize changes the size of the process's terminal.
func (s *ExecStream) Resize(rows, cols int) error {
	if rows <= 0 || cols <= 0 || rows > 0xffff || cols > 0xffff {
		return errdefs.InvalidArgument("invalid_size", "terminal size %dx%d is out of range", rows, cols)
	}
	return s.sendMsg(&agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Resize{Resize: &agentpb.Resize{Rows: uint32(rows), Cols: uint32(cols)}}})
}

func (s *ExecStream) copyStdin(r io.Reader) {
	buf := make([]byte, chunkSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if s.sendMsg(&agentpb.ExecRequest{Msg: &agentpb.ExecRequest_Stdin{Stdin: buf[:n]}}) != nil {
				return
			}
		}
		if err != nil {
			_ = s.CloseStdin()
			return
		}
	}
}

// Recv returns the next event. After the event carrying Exit (or, from
// Replay, the last buffered output) it returns io.EOF.
func (s *ExecStream) Recv() (Event, error) {
	for {
		msg, err := s.recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if s.exit != nil || s.replay {
					return Event{}, io.EOF
				}
				return Event{}, protocolError("call ended before the process exited")
			}
			return Event{}, mapError(err)
		}
		switch e := msg.GetEvent().(type) {
		case *agentpb.ExecResponse_Output:
			return Event{Stream: Stream(e.Output.Stream), Offset: e.Output.Offset, Data: e.Output.Data}, nil
		case *agentpb.ExecResponse_Lost:
			if i := int(e.Lost.Stream) - 1; i == 0 || i == 1 {
				s.lost[i] += e.Lost.Bytes
			}
			return Event{Stream: Stream(e.Lost.Stream), Offset: e.Lost.Offset, Lost: e.Lost.Bytes}, nil
		case *agentpb.ExecResponse_Exited:
			s.exit = exitStatus(e.Exited)
			return Event{Exit: s.exit}, nil
		}
	}
}

func exitStatus(e *agentpb.Exited) *ExitStatus {
	return &ExitStatus{
		Code:        int(e.ExitCode),
		Signal:      e.SignalName,
		TimedOut:    e.TimedOut,
		OOMKilled:   e.OomKilled,
		ExitedAt:    time.Unix(0, e.ExitedAtUnixNano),
		StdoutBytes: e.StdoutBytes,
		StderrBytes: e.StderrBytes,
	}
}

// ErrNotExited is returned by Wait on a Replay stream of a process that is
// still running, once the buffered output is copied.
var ErrNotExited = errors.New("process has not exited")

// Wait copies the process's output to stdout and stderr (either may be nil
// to discard it) until it exits, then closes the stream.
func (s *ExecStream) Wait(stdout, stderr io.Writer) (ExitStatus, error) {
	defer s.Close()
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) && s.exit == nil {
			return ExitStatus{}, ErrNotExited
		}
		if err != nil {
			return ExitStatus{}, err
		}
		if ev.Exit != nil {
			return *ev.Exit, nil
		}
		w := stdout
		if ev.Stream == Stderr {
			w = stderr
		}
		if w != nil && len(ev.Data) > 0 {
			if _, err := w.Write(ev.Data); err != nil {
				return ExitStatus{}, err
			}
		}
	}
}

// Close ends the call. A foreground process still running is killed by the
// agent; a background one keeps running.
func (s *ExecStream) Close() error {
	s.closeOnce.Do(func() {
		if s.stopWatch != nil {
			s.stopWatch()
		}
		s.cancel()
		s.closeSend()
		if s.closeR != nil {
			_ = s.closeR()
		}
	})
	return nil
}

// Result is what Run collects.
type Result struct {
	Exit   ExitStatus
	Stdout []byte
	Stderr []byte
	// Truncated reports that output beyond MaxRunOutput was discarded.
	Truncated bool
}

// MaxRunOutput is how much of each stream Run keeps.
const MaxRunOutput = 16 << 20

// LimitedBuffer keeps the first Max bytes written to it and notes that
// more were discarded: a bound for collected output.
type LimitedBuffer struct {
	bytes.Buffer
	Max       int
	Truncated bool
}

func (b *LimitedBuffer) Write(p []byte) (int, error) {
	if room := b.Max - b.Len(); len(p) > room {
		b.Truncated = true
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// Run runs a foreground process to completion and collects its output.
func (c *Client) Run(ctx context.Context, req ExecRequest) (Result, error) {
	if req.Background {
		return Result{}, errdefs.InvalidArgument("invalid_background", "Run waits for the process; use Exec to start a background process")
	}
	if req.OpenStdin {
		return Result{}, errdefs.InvalidArgument("invalid_stdin", "Run cannot use OpenStdin; set Stdin")
	}
	es, err := c.Exec(ctx, req)
	if err != nil {
		return Result{}, err
	}
	stdout := &LimitedBuffer{Max: MaxRunOutput}
	stderr := &LimitedBuffer{Max: MaxRunOutput}
	st, err := es.Wait(stdout, stderr)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Exit:      st,
		Stdout:    stdout.Bytes(),
		Stderr:    stderr.Bytes(),
		Truncated: stdout.Truncated || stderr.Truncated,
	}, nil
}

// Signal sends sig to a process (its whole group unless processOnly).
func (c *Client) Signal(ctx context.Context, id string, sig syscall.Signal, processOnly bool) error {
	ps, err := toSignal(sig)
	if err != nil {
		return err
	}
	_, err = c.proc.Signal(ctx, connect.NewRequest(&agentpb.SignalRequest{Id: id, Signal: ps, ProcessOnly: processOnly}))
	return mapError(err)
}

// KillAll kills every process in the sandbox except the agent and returns
// how many it killed.
func (c *Client) KillAll(ctx context.Context) (int, error) {
	res, err := c.proc.KillAll(ctx, connect.NewRequest(&agentpb.KillAllRequest{}))
	if err != nil {
		return 0, mapError(err)
	}
	return int(res.Msg.Killed), nil
}

// WriteStdin copies r to a process's stdin (a process started with Stdin
// or OpenStdin), then closes it if closeStdin. It returns the bytes written.
func (c *Client) WriteStdin(ctx context.Context, id string, r io.Reader, closeStdin bool) (int64, error) {
	stream := c.proc.Input(ctx)
	if err := stream.Send(&agentpb.InputRequest{Id: id}); err == nil && r != nil {
		buf := make([]byte, chunkSize)
		for {
			n, rerr := r.Read(buf)
			if n > 0 {
				if stream.Send(&agentpb.InputRequest{Data: buf[:n]}) != nil {
					break // the reason comes from CloseAndReceive
				}
			}
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				_, _ = stream.CloseAndReceive()
				return 0, rerr
			}
		}
	}
	if closeStdin {
		_ = stream.Send(&agentpb.InputRequest{CloseStdin: true})
	}
	res, err := stream.CloseAndReceive()
	if err != nil {
		return 0, mapError(err)
	}
	return res.Msg.Bytes, nil
}

// ProcessInfo describes a process the agent started.
type ProcessInfo struct {
	ID         string
	PID        int
	Argv       []string
	Cwd        string
	Background bool
	PTY        bool
	Running    bool
	StartedAt  time.Time
	Exit       *ExitStatus // set once it exited
	// Next offsets: bytes produced so far.
	Offsets Offsets
}

// Processes lists the running processes and the retained exited
// background ones.
func (c *Client) Processes(ctx context.Context) ([]ProcessInfo, error) {
	res, err := c.proc.List(ctx, connect.NewRequest(&agentpb.ListProcessesRequest{}))
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ProcessInfo, 0, len(res.Msg.Processes))
	for _, p := range res.Msg.Processes {
		pi := ProcessInfo{
			ID: p.Id, PID: int(p.Pid), Argv: p.Argv, Cwd: p.Cwd,
			Background: p.Background, PTY: p.Pty, Running: p.Running,
			StartedAt: time.Unix(0, p.StartedAtUnixNano),
			Offsets:   Offsets{Stdout: p.StdoutBytes, Stderr: p.StderrBytes},
		}
		if p.Exited != nil {
			pi.Exit = exitStatus(p.Exited)
		}
		out = append(out, pi)
	}
	return out, nil
}
