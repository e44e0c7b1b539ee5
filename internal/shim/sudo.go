package shim

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sudo: a process in the sandbox runs a command as root (or as another
// of the sandbox's accounts) the way `sudo` does, with no setuid binary:
// every sandbox runs with no-new-privileges, so a setuid sudo could not
// gain anything. Instead the agent, which starts processes as either
// account anyway, listens on an abstract unix socket of the sandbox's own
// network namespace, and the image's sudo (a link to paddock-shim, which
// acts as the client when called as "sudo") hands it the command, its
// environment and working directory, and its own standard streams (their
// file descriptors, passed over the socket), so a terminal stays a
// terminal. The agent starts the command as it starts every process (its
// oom_score_adj raised; as root, without the agent's own capabilities),
// forwards the signals the client gets, and answers its exit.
//
// Nothing is granted that the sandbox does not have: root in the sandbox
// is one API call away for whoever may exec in it, and the sandbox is
// the boundary. An image opts in by making /usr/bin/sudo a link to the
// agent's binary (the default image does, as E2B's base template has
// sudo); the agent serves sudo only then (SudoEnabled).

// sudoSocket is the abstract socket the agent serves sudo on (a variable
// for tests, which run in the host's network namespace).
var sudoSocket = "@paddock-sudo"

// SudoLink is where an image that wants sudo links the agent's binary.
const SudoLink = "/usr/bin/sudo"

// sudoRequest is what the client asks for: argv as it runs, its final
// environment, its working directory and the account.
type sudoRequest struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Cwd  string   `json:"cwd"`
	User string   `json:"user"`
}

// sudoMessage is every message after the request, both ways: the client
// sends signals; the agent answers started (pid) or an error, then the
// exit.
type sudoMessage struct {
	Pid    int    `json:"pid,omitempty"`
	Signal int    `json:"signal,omitempty"`
	Exited bool   `json:"exited,omitempty"`
	Code   int    `json:"code,omitempty"`
	Error  string `json:"error,omitempty"`
}

// maxSudoRequest bounds a request (argv and environment).
const maxSudoRequest = 1 << 20

// SudoEnabled reports whether the image asks for sudo (SudoLink is a
// symbolic link to the agent's own binary) and the agent can serve it: it
// can act as another account. An agent that cannot (one that runs as
// uid 1000 with no capabilities) does not serve sudo, and the client says
// so.
func SudoEnabled() bool {
	if !canSwitchUsers() {
		return false
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	target, err := os.Readlink(SudoLink)
	if err != nil {
		return false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(SudoLink), target)
	}
	return filepath.Clean(target) == filepath.Clean(self)
}

// Limits of sudo's calls (variables for tests): a request is read within
// sudoRequestTimeout, and at most maxSudoCalls are served at once (a
// call beyond is refused), so that clients that never finish asking
// cannot hold the agent's goroutines and file descriptors.
var (
	sudoRequestTimeout = 10 * time.Second
	maxSudoCalls       = 64
)

// ServeSudo serves sudo on the sandbox's abstract socket until ctx is
// done.
func (s *Server) ServeSudo(ctx context.Context) error {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sudoSocket, Net: "unix"})
	if err != nil {
		return fmt.Errorf("sudo: listen: %w", err)
	}
	defer l.Close()
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	calls := make(chan struct{}, maxSudoCalls)
	acceptSudo(ctx, l.AcceptUnix, func(c *net.UnixConn) { s.sudoConn(c, calls) })
	return nil
}

// acceptSudo hands serve each connection accept returns until ctx is
// done. An accept that fails while it is not (too many open files, say)
// is tried again after a pause that doubles, up to a second.
func acceptSudo(ctx context.Context, accept func() (*net.UnixConn, error), serve func(*net.UnixConn)) {
	var pause time.Duration
	for {
		c, err := accept()
		if err == nil {
			pause = 0
			serve(c)
			continue
		}
		if ctx.Err() != nil {
			return
		}
		pause = min(max(2*pause, 5*time.Millisecond), time.Second)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// sudoConn serves the call on c, or refuses it when calls (a semaphore)
// is full. c is closed when the call ends or the server closes.
func (s *Server) sudoConn(c *net.UnixConn, calls chan struct{}) {
	select {
	case calls <- struct{}{}:
	default:
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_ = json.NewEncoder(c).Encode(sudoMessage{Error: "sudo: too many calls at once", Code: 1})
		_ = c.Close()
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-calls }()
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-s.quit:
			case <-done:
			}
			_ = c.Close()
		}()
		s.sudoCall(c)
	}()
}

// sudoCall serves one sudo: it starts the command, relays signals until
// it exits, and answers the exit. A client that goes away first takes the
// command's process group with it.
func (s *Server) sudoCall(c *net.UnixConn) {
	enc := json.NewEncoder(c)
	_ = c.SetReadDeadline(time.Now().Add(sudoRequestTimeout))
	req, files, err := readSudoRequest(c)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		_ = enc.Encode(sudoMessage{Error: err.Error(), Code: 1})
		return
	}
	defer closeFiles(files)
	uid := peerUID(c)
	exited := make(chan syscall.WaitStatus, 1)
	g := &sudoGroup{}
	pid, err := s.sudoStart(req, files, func(ws syscall.WaitStatus) { g.reaped(); exited <- ws })
	g.started(pid)
	if err != nil {
		_ = enc.Encode(sudoMessage{Error: err.Error(), Code: sudoStartCode(err)})
		return
	}
	closeFiles(files)
	files = nil
	s.log.Info("sudo", "pid", pid, "user", req.User, "by_uid", uid, "argv0", req.Argv[0])
	_ = enc.Encode(sudoMessage{Pid: pid})
	gone := make(chan struct{})
	go relaySudoSignals(c, g, gone)
	select {
	case ws := <-exited:
		_ = enc.Encode(sudoExit(ws))
	case <-gone:
		g.kill(syscall.SIGKILL)
		<-exited
	case <-s.quit:
		g.kill(syscall.SIGKILL)
	}
}

// sudoGroup is a sudo command's process group. It is signalled only until
// its leader is reaped: from then on its id may name another's group.
type sudoGroup struct {
	mu     sync.Mutex
	pid    int
	exited bool
}

// started records the leader's pid.
func (g *sudoGroup) started(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pid = pid
}

// reaped records that the leader was reaped (the reaper calls it before
// it reaps anything else).
func (g *sudoGroup) reaped() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.exited = true
}

// kill sends sig to the group unless its leader has been reaped.
func (g *sudoGroup) kill(sig syscall.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.exited && g.pid > 0 {
		_ = syscall.Kill(-g.pid, sig)
	}
}

// sudoStart starts req's command with files as its standard streams.
func (s *Server) sudoStart(req sudoRequest, files []*os.File, onExit func(syscall.WaitStatus)) (int, error) {
	u, err := agentUser(req.User, UserRoot)
	if err != nil {
		return 0, err
	}
	spec := &spawnSpec{argv: req.Argv, env: req.Env, cwd: req.Cwd, user: u}
	if err := checkArgStrings(spec); err != nil {
		return 0, err
	}
	pathEnv := ""
	for _, kv := range req.Env {
		if v, ok := cutEnv(kv, "PATH"); ok {
			pathEnv = v
		}
	}
	if req.Cwd != "" {
		if _, err := checkCwd(req.Cwd, u); err != nil {
			spec.cwd = u.home // as sudo does when it may not enter it
		}
	}
	path, err := lookPath(req.Argv[0], pathEnv, spec.cwd)
	if err != nil {
		return 0, err
	}
	fds := []uintptr{files[0].Fd(), files[1].Fd(), files[2].Fd()}
	attr := &syscall.ProcAttr{Dir: spec.cwd, Env: spec.env, Files: fds, Sys: &syscall.SysProcAttr{Setpgid: true}}
	pid, err := forkExec(s.log, s.procs.reaper, spec, path, attr, onExit)
	if err != nil {
		return 0, startError(spec, err)
	}
	return pid, nil
}

// sudoStartCode is the exit status the client gives a command that could
// not start, as a shell does: 127 not found, 126 otherwise.
func sudoStartCode(err error) int {
	var re *rpcError
	if errors.As(err, &re) && re.reason == "command_not_found" {
		return 127
	}
	return 126
}

// sudoExit is the exit message for ws: the code, or 128 + the signal.
func sudoExit(ws syscall.WaitStatus) sudoMessage {
	if ws.Signaled() {
		return sudoMessage{Exited: true, Code: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return sudoMessage{Exited: true, Code: ws.ExitStatus()}
}

// maxSudoMessage bounds a message the client sends after its request (a
// line of JSON, a signal): a longer one ends the call.
const maxSudoMessage = 4 << 10

// relaySudoSignals sends the signals the client forwards to the
// command's process group, and closes gone when the client goes away or
// sends what is not a message.
func relaySudoSignals(c *net.UnixConn, g *sudoGroup, gone chan<- struct{}) {
	defer close(gone)
	r := bufio.NewReaderSize(c, maxSudoMessage)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return // gone, or a line too long (bufio.ErrBufferFull)
		}
		var m sudoMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return
		}
		if m.Signal > 0 && m.Signal < 65 {
			g.kill(syscall.Signal(m.Signal))
		}
	}
}

// readSudoRequest reads the request's frame: a 4-byte length, the JSON,
// and, with its first bytes, exactly three file descriptors.
func readSudoRequest(c *net.UnixConn) (sudoRequest, []*os.File, error) {
	var req sudoRequest
	head := make([]byte, 4)
	oob := make([]byte, unix.CmsgSpace(3*4))
	n, oobn, _, _, err := c.ReadMsgUnix(head, oob)
	if err != nil {
		return req, nil, fmt.Errorf("sudo: read request: %w", err)
	}
	files, err := parseRights(oob[:oobn])
	if err != nil {
		return req, nil, err
	}
	if err := checkNotSudoConn(c, files); err != nil {
		closeFiles(files)
		return req, nil, err
	}
	if _, err := io.ReadFull(c, head[n:]); err != nil {
		closeFiles(files)
		return req, nil, fmt.Errorf("sudo: read request: %w", err)
	}
	size := binary.BigEndian.Uint32(head)
	if size == 0 || size > maxSudoRequest {
		closeFiles(files)
		return req, nil, errors.New("sudo: the request is empty or too large")
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(c, body); err != nil {
		closeFiles(files)
		return req, nil, fmt.Errorf("sudo: read request: %w", err)
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Argv) == 0 {
		closeFiles(files)
		return req, nil, errors.New("sudo: the request is malformed")
	}
	return req, files, nil
}

// parseRights returns the three files of an SCM_RIGHTS message.
func parseRights(oob []byte) ([]*os.File, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("sudo: the request carries no standard streams")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 3 {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		return nil, errors.New("sudo: the request must carry exactly three standard streams")
	}
	files := make([]*os.File, 3)
	for i, fd := range fds {
		unix.CloseOnExec(fd)
		files[i] = os.NewFile(uintptr(fd), fmt.Sprintf("sudo-fd%d", i))
	}
	return files, nil
}

// checkNotSudoConn refuses files when one is a client's end of a sudo
// connection (the caller's own, say): the agent would hold it open, and
// the call would never see its client go.
func checkNotSudoConn(c *net.UnixConn, files []*os.File) error {
	ours := c.LocalAddr().String()
	for _, f := range files {
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			continue
		}
		peer, err := unix.Getpeername(int(f.Fd()))
		if sa, ok := peer.(*unix.SockaddrUnix); ok && err == nil && sa.Name == ours {
			return errors.New("sudo: a standard stream is a sudo connection")
		}
	}
	return nil
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// peerUID is the uid of the process that connected c (-1 unknown), for
// the log.
func peerUID(c *net.UnixConn) int {
	uid := -1
	if rc, err := c.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
				uid = int(cred.Uid)
			}
		})
	}
	return uid
}

// cutEnv returns the value of kv when it sets name.
func cutEnv(kv, name string) (string, bool) {
	if len(kv) > len(name) && kv[:len(name)] == name && kv[len(name)] == '=' {
		return kv[len(name)+1:], true
	}
	return "", false
}
