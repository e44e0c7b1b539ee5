package shim

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/agentpb/agentpbconnect"
)

// terminalService implements TerminalService on top of the process manager.
type terminalService struct{ s *Server }

var _ agentpbconnect.TerminalServiceHandler = (*terminalService)(nil)

// terminalEvents sends process events as TerminalResponse messages.
type terminalEvents func(*agentpb.TerminalResponse) error

func (f terminalEvents) output(o *agentpb.Output) error {
	return f(&agentpb.TerminalResponse{Event: &agentpb.TerminalResponse_Output{Output: o}})
}

func (f terminalEvents) lost(l *agentpb.OutputLost) error {
	return f(&agentpb.TerminalResponse{Event: &agentpb.TerminalResponse_Lost{Lost: l}})
}

func (f terminalEvents) exited(e *agentpb.Exited) error {
	return f(&agentpb.TerminalResponse{Event: &agentpb.TerminalResponse_Exited{Exited: e}})
}

func (h *terminalService) Open(ctx context.Context, stream *connect.BidiStream[agentpb.TerminalRequest, agentpb.TerminalResponse]) error {
	first, err := stream.Receive()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errInvalid("missing_start", "the first message must be a start or an attach")
		}
		return err
	}
	var (
		t   *terminal
		off int64
	)
	switch m := first.GetMsg().(type) {
	case *agentpb.TerminalRequest_Start:
		t, err = h.start(m.Start)
	case *agentpb.TerminalRequest_Attach:
		off = m.Attach.Offset
		t, err = h.s.terms.get(m.Attach.TerminalId, m.Attach.Scope)
	default:
		err = errInvalid("missing_start", "the first message must be a start or an attach")
	}
	if err != nil {
		return err
	}
	ctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	gen, off, err := h.s.terms.attach(t, off, end)
	if err != nil {
		return err
	}
	finished := false
	defer func() { h.s.terms.left(t, gen, finished) }()
	if err := stream.Send(&agentpb.TerminalResponse{Event: &agentpb.TerminalResponse_Started{
		Started: &agentpb.Started{Id: t.p.id, Pid: int32(t.p.pid), TerminalId: t.id, Offset: off},
	}}); err != nil {
		return err
	}
	h.s.wg.Go(func() { terminalInput(stream, t.p, end) })
	err = t.p.follow(ctx, h.s.quit, [2]int64{off}, true, true, terminalEvents(stream.Send))
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	// follow returns nil once it has sent the exit.
	finished = err == nil
	return err
}

// start starts a terminal's process, in a place of its scope's
// (TerminalStart.max_terminals).
func (h *terminalService) start(start *agentpb.TerminalStart) (*terminal, error) {
	if err := h.s.terms.reserve(start.Scope, int(start.MaxTerminals)); err != nil {
		return nil, err
	}
	t, err := h.startReserved(start)
	if err != nil {
		h.s.terms.unreserve(start.Scope)
	}
	return t, err
}

// startReserved starts a terminal's process in the place start reserved.
func (h *terminalService) startReserved(start *agentpb.TerminalStart) (*terminal, error) {
	argv := start.Argv
	if len(argv) == 0 {
		user, err := agentUser(start.User, h.s.user)
		if err != nil {
			return nil, err
		}
		argv = []string{defaultShell(os.Getenv("SHELL"), "/etc/passwd", user.uid)}
	}
	spec, _, err := h.s.execSpec(&agentpb.ProcessStart{
		Argv: argv,
		Env:  start.Env,
		Cwd:  start.Cwd,
		Pty:  &agentpb.Pty{Rows: start.Rows, Cols: start.Cols, Term: start.Term},
		User: start.User,
	})
	if err != nil {
		return nil, err
	}
	p, err := h.s.procs.start(spec, 0)
	if err != nil {
		return nil, err
	}
	return h.s.terms.add(p, start.Scope), nil
}

// terminalInput applies a terminal call's messages until its request side
// ends or the call does. The end of the request side alone does not end
// the terminal (a close does, by killing it); a bad message ends the call.
func terminalInput(stream *connect.BidiStream[agentpb.TerminalRequest, agentpb.TerminalResponse], p *process, end context.CancelCauseFunc) {
	for {
		msg, err := stream.Receive()
		if err != nil {
			return
		}
		var c control
		switch m := msg.GetMsg().(type) {
		case *agentpb.TerminalRequest_Input:
			c = control{stdin: m.Input}
		case *agentpb.TerminalRequest_Resize:
			c = control{resize: m.Resize}
		case *agentpb.TerminalRequest_Signal:
			c = control{signal: m.Signal}
		case *agentpb.TerminalRequest_Close:
			if m.Close {
				p.kill(syscall.SIGKILL)
			}
		case *agentpb.TerminalRequest_Start, *agentpb.TerminalRequest_Attach:
			c = control{start: true}
		}
		if err := p.apply(c); err != nil {
			var re *rpcError
			if c.resize != nil && errors.As(err, &re) && re.reason == "process_exited" {
				// A window that changes as the process ends (or a
				// re-attach's size after it ended): the exit follows.
				continue
			}
			end(err)
			return
		}
	}
}

// defaultShell is the shell a terminal opens when it names no command, as
// ssh chooses one: $SHELL, else the user's login shell in passwd, else
// bash where the image has it, else /bin/sh. A shell that is not an
// executable file is passed over.
func defaultShell(env, passwd string, uid int) string {
	usable := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
	}
	if env != "" && usable(env) {
		return env
	}
	if b, err := os.ReadFile(passwd); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			// name:password:uid:gid:gecos:home:shell
			f := strings.Split(line, ":")
			if len(f) == 7 && f[2] == strconv.Itoa(uid) && f[6] != "" && usable(f[6]) {
				return f[6]
			}
		}
	}
	for _, p := range []string{"/bin/bash", "/usr/bin/bash"} {
		if usable(p) {
			return p
		}
	}
	return "/bin/sh"
}
