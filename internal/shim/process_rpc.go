package shim

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/agentpb/agentpbconnect"
)

// processService implements ProcessService.
type processService struct{ s *Server }

var _ agentpbconnect.ProcessServiceHandler = (*processService)(nil)

// execEvents sends process events as ExecResponse messages.
type execEvents func(*agentpb.ExecResponse) error

func (f execEvents) output(o *agentpb.Output) error {
	return f(&agentpb.ExecResponse{Event: &agentpb.ExecResponse_Output{Output: o}})
}

func (f execEvents) lost(l *agentpb.OutputLost) error {
	return f(&agentpb.ExecResponse{Event: &agentpb.ExecResponse_Lost{Lost: l}})
}

func (f execEvents) exited(e *agentpb.Exited) error {
	return f(&agentpb.ExecResponse{Event: &agentpb.ExecResponse_Exited{Exited: e}})
}

// control is one client message to a running call: stdin, a signal or a
// resize.
type control struct {
	stdin      []byte
	closeStdin bool
	signal     agentpb.Signal
	resize     *agentpb.Resize
	start      bool // a second start message: a protocol error
}

func (h *processService) Exec(ctx context.Context, stream *connect.BidiStream[agentpb.ExecRequest, agentpb.ExecResponse]) error {
	first, err := stream.Receive()
	if errors.Is(err, io.EOF) {
		first = nil // no start: startExec refuses it
	} else if err != nil {
		return err
	}
	p, err := h.s.startExec(first)
	if err != nil {
		return err
	}
	defer h.s.procs.release(p)
	if err := stream.Send(startedEvent(p)); err != nil {
		return err
	}
	recv := func() (control, error) {
		msg, err := stream.Receive()
		if err != nil {
			return control{}, err
		}
		return controlOf(msg), nil
	}
	return h.s.serveCall(ctx, p, recv, execEvents(stream.Send))
}

// startExec starts the process an Exec call's first message describes.
func (s *Server) startExec(first *agentpb.ExecRequest) (*process, error) {
	start := first.GetStart()
	if start == nil {
		return nil, errInvalid("missing_start", "the first message must be a start")
	}
	spec, timeout, err := s.execSpec(start)
	if err != nil {
		return nil, err
	}
	return s.procs.start(spec, timeout)
}

// startedEvent is an Exec call's first event.
func startedEvent(p *process) *agentpb.ExecResponse {
	return &agentpb.ExecResponse{Event: &agentpb.ExecResponse_Started{
		Started: &agentpb.Started{Id: p.id, Pid: int32(p.pid)},
	}}
}

// controlOf reads a client message of a running Exec call.
func controlOf(msg *agentpb.ExecRequest) control {
	switch m := msg.GetMsg().(type) {
	case *agentpb.ExecRequest_Stdin:
		return control{stdin: m.Stdin}
	case *agentpb.ExecRequest_CloseStdin:
		return control{closeStdin: m.CloseStdin}
	case *agentpb.ExecRequest_Signal:
		return control{signal: m.Signal}
	case *agentpb.ExecRequest_Resize:
		return control{resize: m.Resize}
	case *agentpb.ExecRequest_Start:
		return control{start: true}
	}
	return control{}
}

func (h *processService) Attach(ctx context.Context, req *connect.Request[agentpb.AttachRequest], stream *connect.ServerStream[agentpb.ExecResponse]) error {
	m := req.Msg
	if m.StdoutOffset < 0 || m.StderrOffset < 0 {
		return errInvalid("invalid_offset", "offsets must not be negative")
	}
	p, err := h.s.procs.get(m.Id)
	if err != nil {
		return err
	}
	if err := stream.Send(startedEvent(p)); err != nil {
		return err
	}
	return p.follow(ctx, h.s.quit, [2]int64{m.StdoutOffset, m.StderrOffset}, !m.NoFollow, false, execEvents(stream.Send))
}

func (h *processService) Input(ctx context.Context, stream *connect.ClientStream[agentpb.InputRequest]) (*connect.Response[agentpb.InputResponse], error) {
	var (
		p     *process
		total int64
	)
	for stream.Receive() {
		m := stream.Msg()
		if p == nil {
			var err error
			if p, err = h.s.procs.get(m.Id); err != nil {
				return nil, err
			}
		}
		if len(m.Data) > 0 {
			n, err := p.writeStdin(m.Data)
			total += int64(n)
			if err != nil {
				return nil, err
			}
		}
		if m.CloseStdin {
			p.closeStdin()
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, errInvalid("missing_process", "no process named")
	}
	return connect.NewResponse(&agentpb.InputResponse{Bytes: total}), nil
}

func (h *processService) Signal(ctx context.Context, req *connect.Request[agentpb.SignalRequest]) (*connect.Response[agentpb.SignalResponse], error) {
	sig, err := toSignal(req.Msg.Signal)
	if err != nil {
		return nil, err
	}
	p, err := h.s.procs.get(req.Msg.Id)
	if err != nil {
		return nil, err
	}
	if err := p.signal(sig, req.Msg.ProcessOnly); err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentpb.SignalResponse{}), nil
}

func (h *processService) KillAll(ctx context.Context, req *connect.Request[agentpb.KillAllRequest]) (*connect.Response[agentpb.KillAllResponse], error) {
	n := h.s.killAll()
	h.s.log.Info("killed every process in the sandbox", "count", n)
	return connect.NewResponse(&agentpb.KillAllResponse{Killed: int32(n)}), nil
}

func (h *processService) List(ctx context.Context, req *connect.Request[agentpb.ListProcessesRequest]) (*connect.Response[agentpb.ListProcessesResponse], error) {
	out := &agentpb.ListProcessesResponse{}
	for _, p := range h.s.procs.list() {
		out.Processes = append(out.Processes, p.info())
	}
	return connect.NewResponse(out), nil
}

// serveCall runs the part of an Exec or terminal call after the start: one
// goroutine applies the client's messages while this one streams the
// process's events. When the call ends, a foreground process is killed.
func (s *Server) serveCall(ctx context.Context, p *process, recv func() (control, error), sink eventSink) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.wg.Go(func() {
		for {
			c, err := recv()
			if err != nil {
				if errors.Is(err, io.EOF) && !p.spec.background {
					p.closeStdin()
				}
				return
			}
			if err := p.apply(c); err != nil {
				cancel(err)
				return
			}
		}
	})
	err := p.follow(ctx, s.quit, [2]int64{}, true, !p.spec.background, sink)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// apply carries out one client message.
func (p *process) apply(c control) error {
	switch {
	case c.start:
		return errInvalid("duplicate_start", "only the first message may be a start")
	case len(c.stdin) > 0:
		// A process that closed its stdin simply no longer reads it.
		_, _ = p.writeStdin(c.stdin)
	case c.closeStdin:
		p.closeStdin()
	case c.signal != agentpb.Signal_SIGNAL_UNSPECIFIED:
		sig, err := toSignal(c.signal)
		if err != nil {
			return err
		}
		if err := p.signal(sig, false); err != nil {
			var re *rpcError
			if errors.As(err, &re) && re.reason == "process_exited" {
				return nil
			}
			return err
		}
	case c.resize != nil:
		return p.resize(c.resize.Rows, c.resize.Cols)
	}
	return nil
}

// execSpec validates a start request.
func (s *Server) execSpec(m *agentpb.ProcessStart) (*spawnSpec, time.Duration, error) {
	if len(m.Argv) == 0 {
		return nil, 0, errInvalid("invalid_command", "argv is empty")
	}
	for _, a := range m.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, 0, errInvalid("invalid_command", "argv contains a NUL byte")
		}
	}
	if m.TimeoutMs < 0 {
		return nil, 0, errInvalid("invalid_timeout", "timeout must not be negative")
	}
	user, err := agentUser(m.User, s.user)
	if err != nil {
		return nil, 0, err
	}
	spec := &spawnSpec{
		argv:       slices.Clone(m.Argv),
		stdin:      m.Stdin,
		background: m.Background,
		user:       user,
	}
	extra := map[string]string{}
	if user.name != "" {
		extra["HOME"], extra["USER"], extra["LOGNAME"] = user.home, user.name, user.name
	}
	if m.Pty != nil {
		size, err := ptyDims(m.Pty.Rows, m.Pty.Cols)
		if err != nil {
			return nil, 0, err
		}
		spec.pty = &size
		spec.stdin = true
		term := m.Pty.Term
		if term == "" {
			term = "xterm-256color"
		}
		extra["TERM"] = term
	}
	env, err := buildEnv(m.Env, m.ClearEnv, s.env.snapshot(), extra)
	if err != nil {
		return nil, 0, err
	}
	spec.env = env
	if spec.cwd, err = checkCwd(m.Cwd, user); err != nil {
		return nil, 0, err
	}
	return spec, time.Duration(m.TimeoutMs) * time.Millisecond, nil
}

func ptyDims(rows, cols uint32) (ptySize, error) {
	if rows == 0 {
		rows = 24
	}
	if cols == 0 {
		cols = 80
	}
	if rows > 0xffff || cols > 0xffff {
		return ptySize{}, errInvalid("invalid_size", "terminal size %dx%d is out of range", rows, cols)
	}
	return ptySize{rows: uint16(rows), cols: uint16(cols)}, nil
}

// ToolsDir is where a runtime's capabilities put their tools (the control
// plane's capability.BinDir). Every process the agent starts finds them on
// its PATH, after the image's own directories, unless the caller cleared
// the environment or gave a PATH of its own.
const ToolsDir = "/workspace/.paddock/capabilities/bin"

// AgentBinDir is where every provider puts the agent in a sandbox
// (/.paddock/bin/paddock-shim). It is on every process's PATH, before
// ToolsDir, so an agent in the sandbox runs `paddock-shim url 3000` by
// name; a sandbox without it (a test's host process) adds nothing.
const AgentBinDir = "/.paddock/bin"

// buildEnv merges, each over the one before: the shim's environment
// (unless clear), the injected environment, extra, and the request's; then
// it adds AgentBinDir (where it exists) and ToolsDir to a PATH the request
// did not give.
func buildEnv(req map[string]string, clear bool, injected, extra map[string]string) ([]string, error) {
	env := map[string]string{}
	if !clear {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
	}
	maps.Copy(env, injected)
	maps.Copy(env, extra)
	for k, v := range req {
		if !validEnvName(k) || strings.IndexByte(v, 0) >= 0 {
			return nil, errInvalid("invalid_env", "environment variable %q is malformed", k)
		}
		env[k] = v
	}
	if _, given := req["PATH"]; !given && env["PATH"] != "" {
		env["PATH"] = appendPath(env["PATH"], AgentBinDir, ToolsDir)
	}
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out, nil
}

// appendPath adds to path each of dirs it lacks, in order; AgentBinDir
// only where it exists.
func appendPath(path string, dirs ...string) string {
	for _, d := range dirs {
		if slices.Contains(filepath.SplitList(path), d) {
			continue
		}
		if d == AgentBinDir {
			if _, err := os.Stat(d); err != nil {
				continue
			}
		}
		path += string(filepath.ListSeparator) + d
	}
	return path
}

// checkCwd validates a working directory for a process of user's; ""
// means the shim's own. It checks as user, who must be able to enter it:
// the chdir comes after the switch to user, in the child, where its
// failure would read as the command's.
func checkCwd(cwd string, user sandboxUser) (string, error) {
	if cwd == "" {
		return "", nil
	}
	c, err := cleanPath(cwd)
	if err != nil {
		var re *rpcError
		if errors.As(err, &re) {
			re.reason = "invalid_cwd"
		}
		return "", err
	}
	err = asUser(user, func() error {
		st, err := os.Stat(c)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return syscall.ENOTDIR
		}
		// faccessat2 with AT_EACCESS checks the thread's file-system ids,
		// which asUser set; a kernel without it is left to the chdir.
		if err := unix.Faccessat2(unix.AT_FDCWD, c, unix.X_OK, unix.AT_EACCESS); err != nil && !errors.Is(err, syscall.ENOSYS) {
			return err
		}
		return nil
	})
	if errors.Is(err, fs.ErrPermission) {
		return "", &rpcError{kind: kindInvalid, reason: "invalid_cwd", subject: c,
			msg: "working directory " + c + " is not open to the process's user", cause: err}
	}
	if err != nil {
		return "", &rpcError{kind: kindInvalid, reason: "invalid_cwd", subject: c,
			msg: "working directory " + c + " does not exist or is not a directory", cause: err}
	}
	return c, nil
}
