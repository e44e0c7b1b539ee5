package sshgw

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// A session channel runs one program, as sshd does:
//
//   - "shell" with a PTY opens the agent's terminal (the sandbox's login
//     shell on a PTY of the size and TERM of pty-req; window-change
//     resizes it);
//   - "shell" without one runs the same shell with pipes;
//   - "exec" runs `sh -c <command>`, on a PTY if one was asked for;
//   - "subsystem" sftp serves SFTP from the agent's file calls (sftp.go).
//
// stdin, stdout and stderr are piped both ways, "signal" requests are
// passed on, and the program's end is reported with exit-status, or
// exit-signal when a signal killed it. When the agent cannot be reached
// (the runtime is not running, the link broke) the reason goes to stderr
// and the channel closes without a status, which ssh reports as 255.
// "env" is accepted for LANG and LC_*, as Debian's sshd does.

// loginShell runs the sandbox's shell without a PTY, chosen as the agent
// chooses a terminal's: $SHELL, else the user's shell in /etc/passwd, else
// bash, else sh.
const loginShell = `s=$SHELL; [ -x "$s" ] || s=$(awk -F: -v u="$(id -u)" '$3 == u { print $7; exit }' /etc/passwd 2>/dev/null); ` +
	`[ -x "$s" ] || s=/bin/bash; [ -x "$s" ] || s=/bin/sh; exec "$s"`

// maxCommandLen bounds an exec request's command.
const maxCommandLen = 256 << 10

// ptyRequest is RFC 4254's pty-req.
type ptyRequest struct {
	Term          string
	Cols, Rows    uint32
	Width, Height uint32
	Modes         string
}

// windowChange is RFC 4254's window-change.
type windowChange struct {
	Cols, Rows    uint32
	Width, Height uint32
}

// process is a running program's controls.
type process interface {
	Resize(rows, cols int) error
	Signal(sig syscall.Signal) error
}

// session is one session channel.
type session struct {
	c   *conn
	ch  ssh.Channel
	ctx context.Context

	mu      sync.Mutex
	env     map[string]string
	pty     *ptyRequest
	started bool
	proc    process
}

func (c *conn) session(nc ssh.NewChannel) {
	ch, reqs, err := nc.Accept()
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { ch.Close() })
	defer stop()
	s := &session{c: c, ch: ch, ctx: ctx, env: map[string]string{}}
	var run sync.WaitGroup
	for req := range reqs {
		s.handle(req, &run)
	}
	// The client closed the channel (or the connection is gone): end the
	// program if it still runs.
	cancel()
	run.Wait()
}

// handle answers one channel request; a program it starts runs in run.
func (s *session) handle(req *ssh.Request, run *sync.WaitGroup) {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	var ok bool
	switch req.Type {
	case "pty-req":
		ok = s.ptyRequested(req.Payload, started)
	case "env":
		ok = s.envSet(req.Payload, started)
	case "window-change":
		ok = s.windowChanged(req.Payload)
	case "signal":
		ok = s.signalled(req.Payload)
	case "shell", "exec", "subsystem":
		var arg string
		if arg, ok = s.startRequested(req, started); ok {
			// The answer goes before the program's first output.
			reply(req, true)
			run.Go(func() { s.run(req.Type, arg, run) })
			return
		}
	default:
		// auth-agent-req@openssh.com, x11-req and the rest: refused.
	}
	reply(req, ok)
}

// reply answers req when it asks for an answer.
func reply(req *ssh.Request, ok bool) {
	if req.WantReply {
		_ = req.Reply(ok, nil)
	}
}

// ptyRequested takes a pty-req before the program starts.
func (s *session) ptyRequested(payload []byte, started bool) bool {
	var p ptyRequest
	if started || ssh.Unmarshal(payload, &p) != nil || !validTerm(p.Term) {
		return false
	}
	s.mu.Lock()
	s.pty = &p
	s.mu.Unlock()
	return true
}

// envSet takes an accepted environment variable before the program
// starts.
func (s *session) envSet(payload []byte, started bool) bool {
	var kv struct{ Name, Value string }
	if started || ssh.Unmarshal(payload, &kv) != nil || !acceptedEnv(kv.Name) || strings.IndexByte(kv.Value, 0) >= 0 || len(kv.Value) > 4096 {
		return false
	}
	s.mu.Lock()
	s.env[kv.Name] = kv.Value
	s.mu.Unlock()
	return true
}

// windowChanged resizes the pty, and the running program's terminal.
func (s *session) windowChanged(payload []byte) bool {
	var w windowChange
	if ssh.Unmarshal(payload, &w) != nil {
		return false
	}
	s.mu.Lock()
	if s.pty != nil {
		s.pty.Cols, s.pty.Rows = w.Cols, w.Rows
	}
	proc := s.proc
	s.mu.Unlock()
	if proc != nil && w.Rows > 0 && w.Cols > 0 {
		_ = proc.Resize(int(w.Rows), int(w.Cols))
	}
	return true
}

// signalled sends a named signal to the running program.
func (s *session) signalled(payload []byte) bool {
	var sig struct{ Name string }
	if ssh.Unmarshal(payload, &sig) != nil {
		return false
	}
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	n, ok := signalNamed(sig.Name)
	if proc == nil || !ok {
		return false
	}
	return proc.Signal(n) == nil
}

// startRequested takes the one shell, exec or sftp subsystem request of a
// session, and returns its argument.
func (s *session) startRequested(req *ssh.Request, started bool) (string, bool) {
	var arg struct{ Value string }
	if req.Type != "shell" && ssh.Unmarshal(req.Payload, &arg) != nil {
		return "", false
	}
	if started || len(arg.Value) > maxCommandLen || (req.Type == "subsystem" && arg.Value != "sftp") {
		return "", false
	}
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	return arg.Value, true
}

// run runs the session's program and reports how it ended; then it closes
// the channel.
func (s *session) run(kind, arg string, bg *sync.WaitGroup) {
	defer s.ch.Close()
	agent, err := s.c.g.agentOf(s.ctx, s.c.grant.runtimeID)
	if err != nil {
		s.fail(err)
		return
	}
	// A copy: window-change may move the size meanwhile (setProc).
	s.mu.Lock()
	var pty *ptyRequest
	if s.pty != nil {
		p := *s.pty
		pty = &p
	}
	env := s.env // no longer changes: the program has started
	s.mu.Unlock()
	switch {
	case kind == "subsystem":
		s.sftp(agent)
	case kind == "shell" && pty != nil:
		s.terminal(agent, pty, env, bg)
	case kind == "shell":
		s.exec(agent, []string{"/bin/sh", "-c", loginShell}, nil, env, bg)
	default:
		s.exec(agent, []string{"/bin/sh", "-c", arg}, pty, env, bg)
	}
}

// terminal runs the sandbox's shell on the agent's terminal.
func (s *session) terminal(agent *agentconn.Client, pty *ptyRequest, env map[string]string, bg *sync.WaitGroup) {
	term, err := agent.Terminal(s.ctx, agentconn.TerminalRequest{
		Env: env, Rows: clampSize(pty.Rows), Cols: clampSize(pty.Cols), Term: pty.Term,
	})
	if err != nil {
		s.fail(err)
		return
	}
	defer term.Close()
	s.setProc(term, pty)
	// Input until the channel ends. A PTY has one stream both ways, so
	// the client's end-of-file is not passed on (as with sshd): the shell
	// ends by itself, or with the channel.
	bg.Go(func() { _, _ = io.Copy(term, s.ch) })
	if _, err := io.Copy(s.ch, term); err != nil {
		s.fail(err)
		return
	}
	if st, ok := term.Exit(); ok {
		s.exit(st)
	}
}

// exec runs argv with pipes, or on a PTY when pty is set.
func (s *session) exec(agent *agentconn.Client, argv []string, pty *ptyRequest, env map[string]string, bg *sync.WaitGroup) {
	req := agentconn.ExecRequest{Argv: argv, Env: env, OpenStdin: true}
	if pty != nil {
		req.PTY = &agentconn.PTY{Rows: clampSize(pty.Rows), Cols: clampSize(pty.Cols), Term: pty.Term}
	}
	es, err := agent.Exec(s.ctx, req)
	if err != nil {
		s.fail(err)
		return
	}
	defer es.Close()
	s.setProc(es, pty)
	bg.Go(func() {
		_, err := io.Copy(es, s.ch)
		if err == nil && pty == nil {
			// The client's end-of-file closes a pipe; a PTY keeps it,
			// as above.
			_ = es.CloseStdin()
		}
	})
	st, err := es.Wait(s.ch, s.ch.Stderr())
	if err != nil {
		s.fail(err)
		return
	}
	s.exit(st)
}

// setProc makes p the program that signal and window-change requests go
// to, and gives it the size the window took while it started.
func (s *session) setProc(p process, started *ptyRequest) {
	s.mu.Lock()
	s.proc = p
	var now ptyRequest
	if s.pty != nil {
		now = *s.pty
	}
	s.mu.Unlock()
	if started != nil && (now.Rows != started.Rows || now.Cols != started.Cols) && now.Rows > 0 && now.Cols > 0 {
		_ = p.Resize(int(now.Rows), int(now.Cols))
	}
}

// exit reports how the program ended, then end-of-file.
func (s *session) exit(st agentconn.ExitStatus) {
	if st.Signal != "" {
		_, _ = s.ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
			Signal     string
			CoreDumped bool
			Message    string
			Lang       string
		}{Signal: strings.TrimPrefix(st.Signal, "SIG"), Message: "killed by " + st.Signal}))
	} else {
		_, _ = s.ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(st.Code)}))
	}
	_ = s.ch.CloseWrite()
}

// fail tells the client why its program could not run or went on no
// longer, on stderr; the channel then closes without an exit status.
func (s *session) fail(err error) {
	if s.ctx.Err() != nil {
		return // the client left, or the gateway is closing
	}
	msg := errdefs.PublicMessage(err, "the connection to the sandbox's agent failed")
	if pe, ok := errdefs.Public(err); ok && pe.Code != "" {
		msg += " (" + pe.Code + ")"
	}
	s.c.g.logger.Info("ssh session failed", "client", s.c.client, "runtime", s.c.grant.runtimeID, "err", err)
	nl := "\n"
	s.mu.Lock()
	if s.pty != nil {
		nl = "\r\n"
	}
	s.mu.Unlock()
	_, _ = fmt.Fprintf(s.ch.Stderr(), "paddock: %s%s", msg, nl)
}

// clampSize is a terminal dimension the agent takes (0: its default).
func clampSize(n uint32) int {
	return int(min(n, 0xffff))
}

// validTerm accepts a TERM value as the API does.
func validTerm(t string) bool {
	if t == "" {
		return true
	}
	if len(t) > 64 {
		return false
	}
	for i, c := range t {
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || i > 0 && strings.ContainsRune("._+-", c)
		if !ok {
			return false
		}
	}
	return true
}

// acceptedEnv reports whether a client may set the variable name: the
// locale only, as Debian's sshd (AcceptEnv LANG LC_*).
func acceptedEnv(name string) bool {
	return name == "LANG" || strings.HasPrefix(name, "LC_") && len(name) <= 64
}

// signalNamed maps an RFC 4254 signal name ("INT") to a signal the agent
// passes on.
func signalNamed(name string) (syscall.Signal, bool) {
	s, ok := map[string]syscall.Signal{
		"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT, "KILL": syscall.SIGKILL,
		"TERM": syscall.SIGTERM, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
	}[name]
	return s, ok
}
