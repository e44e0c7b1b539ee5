package shim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"

	procpb "github.com/paddockhq/paddock/internal/agentpb/envd/process"
)

// keepaliveHeader is the request header in which an envd client asks for
// keepalive events on a stream: every so many seconds without another
// event.
const keepaliveHeader = "Keepalive-Ping-Interval"

// defaultKeepalive is envd's interval when the client asks for none.
const defaultKeepalive = 90 * time.Second

// keepaliveInterval parses a Keepalive-Ping-Interval value, as envd does:
// whole seconds; anything else is the default.
func keepaliveInterval(v string) time.Duration {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > int64(24*time.Hour/time.Second) {
		return defaultKeepalive
	}
	return time.Duration(n) * time.Second
}

// startTimeout is how long a process started by a call may run: as in
// envd, the call's deadline (its Connect-Timeout-Ms) bounds the process,
// which is killed when it passes; 0 is no bound.
func startTimeout(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return max(time.Until(d), time.Millisecond)
}

// envdUser is the account an envd call acts as: the user of its
// "Authorization: Basic <user>:" header, else the sandbox's default user.
// The control plane authorized the caller; the header only chooses.
func (s *Server) envdUser(h http.Header) (sandboxUser, error) {
	name, _, ok := (&http.Request{Header: h}).BasicAuth()
	if !ok {
		name = ""
	}
	u, err := lookupUser(name, s.user)
	if err != nil {
		return sandboxUser{}, connect.NewError(connect.CodeUnauthenticated, fmt.Errorf("invalid username: '%s'", name))
	}
	return u, mayBecome(u)
}

// envdSpec validates an envd start request made with header h.
func (s *Server) envdSpec(m *procpb.StartRequest, h http.Header) (*spawnSpec, error) {
	cfg := m.GetProcess()
	if cfg.GetCmd() == "" {
		return nil, errInvalid("invalid_command", "the command is empty")
	}
	argv := append([]string{cfg.GetCmd()}, cfg.GetArgs()...)
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, errInvalid("invalid_command", "the command contains a NUL byte")
		}
	}
	user, err := s.envdUser(h)
	if err != nil {
		return nil, err
	}
	// The process runs on after the call, but its output waits for the
	// Start call's client while it follows.
	spec := &spawnSpec{argv: argv, background: true, pinned: true, user: user, stdin: m.Stdin == nil || m.GetStdin()}
	extra := map[string]string{}
	if user.name != "" {
		extra["HOME"], extra["USER"], extra["LOGNAME"] = user.home, user.name, user.name
	}
	if m.Pty != nil {
		size, err := ptyDims(m.GetPty().GetSize().GetRows(), m.GetPty().GetSize().GetCols())
		if err != nil {
			return nil, err
		}
		spec.pty, spec.stdin = &size, true
		extra["TERM"] = "xterm-256color" // unless the request sets it
	}
	if spec.env, err = buildEnv(cfg.GetEnvs(), false, s.env.snapshot(), extra); err != nil {
		return nil, err
	}
	cwd, err := envdCwd(cfg.GetCwd(), user)
	if err != nil {
		return nil, err
	}
	if spec.cwd, err = checkCwd(cwd, user); err != nil {
		return nil, err
	}
	return spec, nil
}

// envdCwd resolves a working directory as envd does: none is the user's
// home, a leading ~ is the home, and a relative path is the home's.
func envdCwd(cwd string, user sandboxUser) (string, error) {
	if cwd == "" {
		return user.home, nil // "" for the agent's own identity: the agent's
	}
	if rest, ok := strings.CutPrefix(cwd, "~"); ok {
		if rest != "" && rest[0] != '/' {
			return "", errInvalid("invalid_cwd", "cannot expand %q: only the user's own home (~) can be named", cwd)
		}
		cwd = user.home + rest
	}
	if !filepath.IsAbs(cwd) {
		if user.home == "" {
			return "", errInvalid("invalid_cwd", "working directory %q is relative and the user has no home", cwd)
		}
		cwd = filepath.Join(user.home, cwd)
	}
	return cwd, nil
}

func (h *envdProcessService) SendInput(ctx context.Context, req *connect.Request[procpb.SendInputRequest]) (*connect.Response[procpb.SendInputResponse], error) {
	ep, err := h.get(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	if err := ep.input(req.Msg.GetInput()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&procpb.SendInputResponse{}), nil
}

func (h *envdProcessService) StreamInput(ctx context.Context, stream *connect.ClientStream[procpb.StreamInputRequest]) (*connect.Response[procpb.StreamInputResponse], error) {
	var ep *envdProcess
	for stream.Receive() {
		switch ev := stream.Msg().GetEvent().(type) {
		case *procpb.StreamInputRequest_Start:
			p, err := h.get(ev.Start.GetProcess())
			if err != nil {
				return nil, err
			}
			ep = p
		case *procpb.StreamInputRequest_Data:
			if ep == nil {
				return nil, errInvalid("missing_start", "the first message must name the process")
			}
			if err := ep.input(ev.Data.GetInput()); err != nil {
				return nil, err
			}
		case *procpb.StreamInputRequest_Keepalive:
		default:
			return nil, &rpcError{kind: kindUnimplemented, reason: "invalid_event", msg: "unknown input event"}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	return connect.NewResponse(&procpb.StreamInputResponse{}), nil
}

// input writes to the process's stdin or to its terminal, whichever in
// says and the process has.
func (ep *envdProcess) input(in *procpb.ProcessInput) error {
	var data []byte
	pty := ep.p.spec.pty != nil
	switch v := in.GetInput().(type) {
	case *procpb.ProcessInput_Stdin:
		if pty {
			return errPrecondition("is_a_terminal", "", "process %d has a terminal: send its input as pty", ep.p.pid)
		}
		data = v.Stdin
	case *procpb.ProcessInput_Pty:
		if !pty {
			return errPrecondition("not_a_terminal", "", "process %d has no terminal: send its input as stdin", ep.p.pid)
		}
		data = v.Pty
	default:
		return &rpcError{kind: kindUnimplemented, reason: "invalid_input", msg: "the input is neither stdin nor pty"}
	}
	if len(data) == 0 {
		return nil
	}
	_, err := ep.p.writeStdin(data)
	return err
}

func (h *envdProcessService) SendSignal(ctx context.Context, req *connect.Request[procpb.SendSignalRequest]) (*connect.Response[procpb.SendSignalResponse], error) {
	ep, err := h.get(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	var sig syscall.Signal
	switch req.Msg.GetSignal() {
	case procpb.Signal_SIGNAL_SIGKILL:
		sig = syscall.SIGKILL
	case procpb.Signal_SIGNAL_SIGTERM:
		sig = syscall.SIGTERM
	default:
		return nil, &rpcError{kind: kindUnimplemented, reason: "invalid_signal", msg: fmt.Sprintf("invalid signal: %s", req.Msg.GetSignal())}
	}
	// To its group: what it started goes too (and a PTY's session).
	if err := ep.p.signal(sig, false); err != nil {
		return nil, exitedIsNotFound(ep, err)
	}
	return connect.NewResponse(&procpb.SendSignalResponse{}), nil
}

func (h *envdProcessService) CloseStdin(ctx context.Context, req *connect.Request[procpb.CloseStdinRequest]) (*connect.Response[procpb.CloseStdinResponse], error) {
	ep, err := h.get(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	if ep.p.spec.pty != nil {
		return nil, errPrecondition("is_a_terminal", "", "cannot close the stdin of process %d, it has a terminal: send ^D (0x04) instead", ep.p.pid)
	}
	ep.p.closeStdin()
	return connect.NewResponse(&procpb.CloseStdinResponse{}), nil
}

func (h *envdProcessService) Update(ctx context.Context, req *connect.Request[procpb.UpdateRequest]) (*connect.Response[procpb.UpdateResponse], error) {
	ep, err := h.get(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	if req.Msg.Pty != nil {
		size := req.Msg.GetPty().GetSize()
		if err := ep.p.resize(size.GetRows(), size.GetCols()); err != nil {
			return nil, exitedIsNotFound(ep, err)
		}
	}
	return connect.NewResponse(&procpb.UpdateResponse{}), nil
}

// exitedIsNotFound answers not_found for a process that has exited, as
// envd, which forgets a process as it exits, does.
func exitedIsNotFound(ep *envdProcess, err error) error {
	var re *rpcError
	if errors.As(err, &re) && re.reason == "process_exited" {
		return errNotFound("process_not_found", "", "process with pid %d not found", ep.p.pid)
	}
	return err
}
