package shim

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

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
			return errInvalid("missing_start", "the first message must be a start")
		}
		return err
	}
	start := first.GetStart()
	if start == nil {
		return errInvalid("missing_start", "the first message must be a start")
	}
	argv := start.Argv
	if len(argv) == 0 {
		user, err := lookupUser(start.User, h.s.user)
		if err != nil {
			return err
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
		return err
	}
	p, err := h.s.procs.start(spec, 0)
	if err != nil {
		return err
	}
	defer h.s.procs.release(p)
	if err := stream.Send(&agentpb.TerminalResponse{Event: &agentpb.TerminalResponse_Started{
		Started: &agentpb.Started{Id: p.id, Pid: int32(p.pid)},
	}}); err != nil {
		return err
	}
	recv := func() (control, error) {
		msg, err := stream.Receive()
		if err != nil {
			return control{}, err
		}
		switch m := msg.GetMsg().(type) {
		case *agentpb.TerminalRequest_Input:
			return control{stdin: m.Input}, nil
		case *agentpb.TerminalRequest_Resize:
			return control{resize: m.Resize}, nil
		case *agentpb.TerminalRequest_Signal:
			return control{signal: m.Signal}, nil
		case *agentpb.TerminalRequest_Start:
			return control{start: true}, nil
		}
		return control{}, nil
	}
	return h.s.serveCall(ctx, p, recv, terminalEvents(stream.Send))
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
