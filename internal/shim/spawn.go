package shim

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// spawnSpec is a validated request to start a process.
type spawnSpec struct {
	argv       []string
	env        []string // KEY=value, final
	cwd        string   // "" inherits the shim's
	stdin      bool
	pty        *ptySize
	background bool
	// pinned holds a background process's output for its first follower
	// until release, as a foreground process's always is.
	pinned bool
	user   sandboxUser
}

type ptySize struct{ rows, cols uint16 }

// stdio is the parent's side of a new process's standard streams.
type stdio struct {
	stdin  *os.File // write end, or the PTY master; nil without stdin
	stdout *os.File // read end, or the PTY master
	stderr *os.File // read end; nil with a PTY
	master *os.File // the PTY master, nil without a PTY
}

func (s *stdio) closeAll() {
	for _, f := range []*os.File{s.stdin, s.stdout, s.stderr, s.master} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// lookPath resolves argv0 the way a shell would, using pathEnv (the new
// process's PATH) and cwd for relative names.
func lookPath(argv0, pathEnv, cwd string) (string, error) {
	if argv0 == "" {
		return "", errInvalid("invalid_command", "argv[0] is empty")
	}
	if strings.ContainsRune(argv0, '/') {
		p := argv0
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		return p, checkExecutable(p, argv0)
	}
	var permErr error
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, argv0)
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		err := checkExecutable(p, argv0)
		if err == nil {
			return p, nil
		}
		if permErr == nil && !errors.Is(err, fs.ErrNotExist) {
			permErr = err
		}
	}
	if permErr != nil {
		return "", permErr
	}
	return "", errNotFound("command_not_found", argv0, "command %q not found in PATH", argv0)
}

func checkExecutable(p, argv0 string) error {
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return &rpcError{kind: kindNotFound, reason: "command_not_found", subject: argv0,
				msg: fmt.Sprintf("command %q not found", argv0), cause: fs.ErrNotExist}
		}
		return commandError(argv0, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return errPermission("command_not_executable", argv0, "command %q is not an executable file", argv0)
	}
	return nil
}

// openPTY allocates a pseudo-terminal. The master is returned in
// non-blocking mode, so that closing it interrupts a pending read.
func openPTY(size ptySize) (master, tty *os.File, err error) {
	m, t, err := pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	_ = m.Close()
	if err != nil {
		_ = t.Close()
		return nil, nil, fmt.Errorf("dup pty master: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		_ = t.Close()
		return nil, nil, fmt.Errorf("pty master non-blocking: %w", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := setWinsize(master, size); err != nil {
		_ = master.Close()
		_ = t.Close()
		return nil, nil, err
	}
	return master, t, nil
}

// setWinsize sets a PTY's window size without switching the master to
// blocking mode (as File.Fd would).
func setWinsize(master *os.File, size ptySize) error {
	rc, err := master.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: size.rows, Col: size.cols})
	})
	if err != nil {
		return err
	}
	if ioErr != nil {
		return fmt.Errorf("set pty size: %w", ioErr)
	}
	return nil
}

// devNull is the agent's one descriptor of /dev/null, the standard input
// of every process started without one. Opened once: each process gets it
// by dup2 in the fork.
var devNull = sync.OnceValues(func() (int, error) {
	fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	return fd, nil
})

// pipe makes a pipe for a new process's standard stream: the agent's end,
// non-blocking and polled, and the process's, a plain blocking descriptor
// (never an *os.File, which would register it with the poller only for
// Fd to take it out again). read says the agent reads its end.
func pipe(read bool) (agent *os.File, proc int, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, -1, err
	}
	mine, theirs := p[1], p[0]
	if read {
		mine, theirs = p[0], p[1]
	}
	if err := unix.SetNonblock(mine, true); err != nil {
		_ = unix.Close(mine)
		_ = unix.Close(theirs)
		return nil, -1, err
	}
	return os.NewFile(uintptr(mine), "|0"), theirs, nil
}

// spawn starts the process described by spec through the reaper and
// returns its pid and the parent's ends of its standard streams. onExit
// receives its wait status.
func spawn(log *slog.Logger, r *Reaper, spec *spawnSpec, path string, onExit func(syscall.WaitStatus)) (int, *stdio, error) {
	if err := checkArgStrings(spec); err != nil {
		return 0, nil, err
	}
	var (
		io       stdio
		tty      *os.File // the PTY's child end
		child    []int    // the child's ends, closed in the parent after the fork
		sys      = &syscall.SysProcAttr{Setpgid: true}
		files    [3]uintptr
		closeAll = func() {
			for _, fd := range child {
				_ = unix.Close(fd)
			}
			if tty != nil {
				_ = tty.Close()
			}
		}
	)
	if spec.pty != nil {
		master, t, err := openPTY(*spec.pty)
		if err != nil {
			return 0, nil, err
		}
		tty = t
		io.master, io.stdin, io.stdout = master, master, master
		files = [3]uintptr{tty.Fd(), tty.Fd(), tty.Fd()}
		sys = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	} else {
		stdinFD, err := devNull()
		if err != nil {
			return 0, nil, err
		}
		if spec.stdin {
			if io.stdin, stdinFD, err = pipe(false); err != nil {
				return 0, nil, fmt.Errorf("stdin pipe: %w", err)
			}
			child = append(child, stdinFD)
		}
		outR, outW, err := pipe(true)
		if err != nil {
			closeAll()
			io.closeAll()
			return 0, nil, fmt.Errorf("stdout pipe: %w", err)
		}
		child = append(child, outW)
		io.stdout = outR
		errR, errW, err := pipe(true)
		if err != nil {
			closeAll()
			io.closeAll()
			return 0, nil, fmt.Errorf("stderr pipe: %w", err)
		}
		child = append(child, errW)
		io.stderr = errR
		files = [3]uintptr{uintptr(stdinFD), uintptr(outW), uintptr(errW)}
	}
	attr := &syscall.ProcAttr{Dir: spec.cwd, Env: spec.env, Files: files[:], Sys: sys}
	pid, err := forkExec(log, r, spec, path, attr, onExit)
	closeAll()
	if err != nil {
		io.closeAll()
		return 0, nil, startError(spec, err)
	}
	return pid, &io, nil
}

// forkExec starts the process as spec's user through the reaper and
// raises its oom_score_adj.
func forkExec(log *slog.Logger, r *Reaper, spec *spawnSpec, path string, attr *syscall.ProcAttr, onExit func(syscall.WaitStatus)) (int, error) {
	if u := spec.user; !u.isAgent() {
		attr.Sys.Credential = &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid), Groups: []uint32{}}
	}
	start := func() (int, error) {
		pid, err := syscall.ForkExec(path, spec.argv, attr)
		if err == nil {
			if oerr := raiseOOMScore(pid); oerr != nil {
				log.Warn("cannot raise a process's oom_score_adj: it may be killed after the agent", "pid", pid, "err", oerr)
			}
		}
		return pid, err
	}
	if spec.user.uid != 0 {
		return r.Start(start, onExit)
	}
	// Root keeps root's capabilities in the sandbox, not the agent's own:
	// it is forked on the thread without them.
	var pid int
	err := r.capless.do(func() (err error) {
		pid, err = r.Start(start, onExit)
		return err
	})
	return pid, err
}

// childOOMScoreAdj is the oom_score_adj of every process the agent starts
// (their children inherit it), against the agent's own 0: when a sandbox
// runs out of memory, the kernel kills what runs in it before the agent,
// which then reports the death (SIGKILL) and keeps serving.
const childOOMScoreAdj = 1000

// raiseOOMScore makes pid the first thing the OOM killer picks. Raising
// needs no privilege. It runs just after the exec; what the process
// allocates in that instant already counts against it (the kernel picks by
// size, too), so the window costs nothing. A failure (no /proc, or the
// process already gone) is only logged: the process runs as before.
func raiseOOMScore(pid int) error {
	err := asProcessOwner(pid, false, func() error {
		return os.WriteFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid), []byte(strconv.Itoa(childOOMScoreAdj)), 0)
	})
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return nil // it exited already
	}
	return err
}

// maxArgStrLen is Linux's MAX_ARG_STRLEN: the longest argument or
// environment entry execve takes, its NUL included.
const maxArgStrLen = 32 * 4096

// checkArgStrings refuses an argument or environment entry execve would
// refuse, as E2BIG, before forking: gVisor's kernel refuses it too, but as
// ENAMETOOLONG.
func checkArgStrings(spec *spawnSpec) error {
	for _, list := range [][]string{spec.argv, spec.env} {
		for _, a := range list {
			if len(a)+1 > maxArgStrLen {
				return commandError(spec.argv[0], syscall.E2BIG)
			}
		}
	}
	return nil
}

// startError maps a failed fork/exec to a public error.
func startError(spec *spawnSpec, err error) error {
	return commandError(spec.argv[0], err)
}

// commandErrors maps what looking up or executing a command can fail with
// to a public error: what the caller sent (a command that is missing or
// cannot be run, arguments past the kernel's limit) is a 4xx with a stable
// reason; only what is left is internal. A process that cannot start gets
// no id, so the exit codes a shell gives these (127, 126) are the
// client's to choose.
var commandErrors = map[syscall.Errno]struct {
	kind   errKind
	reason string
	msg    string // %[1]q is the command
}{
	syscall.ENOENT:       {kindNotFound, "command_not_found", "command %[1]q (or its interpreter) not found"},
	syscall.ENOTDIR:      {kindNotFound, "command_not_found", "command %[1]q not found: a component of its path is not a directory"},
	syscall.EACCES:       {kindPermission, "command_not_executable", "command %[1]q cannot be run: permission denied"},
	syscall.EPERM:        {kindPermission, "command_not_executable", "command %[1]q cannot be run: operation not permitted"},
	syscall.EISDIR:       {kindPermission, "command_not_executable", "command %[1]q cannot be run: its interpreter is a directory"},
	syscall.ENOEXEC:      {kindFailedPrecondition, "exec_format_error", "command %[1]q is not in an executable format"},
	syscall.ELIBBAD:      {kindFailedPrecondition, "exec_format_error", "command %[1]q names a corrupt shared-library interpreter"},
	syscall.ELOOP:        {kindFailedPrecondition, "too_many_symlinks", "command %[1]q: too many levels of symbolic links"},
	syscall.ENAMETOOLONG: {kindInvalid, "invalid_command", "command %[1]q: a path name is too long"},
	syscall.E2BIG:        {kindInvalid, "argument_list_too_long", "the arguments and environment of %[1]q exceed the kernel's limit (128 KiB for one argument or variable, a quarter of the stack limit for all)"},
	syscall.ETXTBSY:      {kindExists, "text_file_busy", "command %[1]q is open for writing by another process"},
	syscall.EAGAIN:       {kindResourceExhausted, "process_limit", processLimitMsg},
	syscall.ENOMEM:       {kindResourceExhausted, "process_limit", processLimitMsg}, // gVisor's answer at the pids limit
	syscall.EMFILE:       {kindResourceExhausted, "too_many_open_files", "the agent has too many open files to start %[1]q"},
	syscall.ENFILE:       {kindResourceExhausted, "too_many_open_files", "the system has too many open files to start %[1]q"},
}

const processLimitMsg = "the sandbox has reached its process limit, so it cannot start %[1]q: stop some (paddock ps, paddock kill), kill everything but the agent (paddock kill --all, or POST …/processes/kill-all), or reset the runtime"

// commandError maps an error looking up or starting argv0 to a public
// error; see commandErrors.
func commandError(argv0 string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if m, ok := commandErrors[errno]; ok {
			return &rpcError{kind: m.kind, reason: m.reason, subject: argv0, msg: fmt.Sprintf(m.msg, argv0), cause: err}
		}
	}
	return &rpcError{kind: kindInternal, reason: "start_failed", subject: argv0,
		msg: fmt.Sprintf("cannot start %q", argv0), cause: err}
}
