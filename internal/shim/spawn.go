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
		return errPermission("command_not_executable", argv0, "command %q cannot be run", argv0)
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

// spawn starts the process described by spec through the reaper and
// returns its pid and the parent's ends of its standard streams. onExit
// receives its wait status.
func spawn(log *slog.Logger, r *Reaper, spec *spawnSpec, path string, onExit func(syscall.WaitStatus)) (int, *stdio, error) {
	var (
		io       stdio
		child    []*os.File // the child's ends, closed in the parent after the fork
		sys      = &syscall.SysProcAttr{Setpgid: true}
		files    [3]uintptr
		closeAll = func() {
			for _, f := range child {
				_ = f.Close()
			}
		}
	)
	if spec.pty != nil {
		master, tty, err := openPTY(*spec.pty)
		if err != nil {
			return 0, nil, err
		}
		child = append(child, tty)
		io.master, io.stdin, io.stdout = master, master, master
		files = [3]uintptr{tty.Fd(), tty.Fd(), tty.Fd()}
		sys = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	} else {
		var stdinR *os.File
		if spec.stdin {
			r, w, err := os.Pipe()
			if err != nil {
				return 0, nil, fmt.Errorf("stdin pipe: %w", err)
			}
			stdinR, io.stdin = r, w
		} else {
			f, err := os.Open(os.DevNull)
			if err != nil {
				return 0, nil, fmt.Errorf("open %s: %w", os.DevNull, err)
			}
			stdinR = f
		}
		child = append(child, stdinR)
		outR, outW, err := os.Pipe()
		if err != nil {
			closeAll()
			io.closeAll()
			return 0, nil, fmt.Errorf("stdout pipe: %w", err)
		}
		child = append(child, outW)
		io.stdout = outR
		errR, errW, err := os.Pipe()
		if err != nil {
			closeAll()
			io.closeAll()
			return 0, nil, fmt.Errorf("stderr pipe: %w", err)
		}
		child = append(child, errW)
		io.stderr = errR
		files = [3]uintptr{stdinR.Fd(), outW.Fd(), errW.Fd()}
	}
	attr := &syscall.ProcAttr{Dir: spec.cwd, Env: spec.env, Files: files[:], Sys: sys}
	pid, err := r.Start(func() (int, error) {
		pid, err := syscall.ForkExec(path, spec.argv, attr)
		if err == nil {
			if oerr := raiseOOMScore(pid); oerr != nil {
				log.Warn("cannot raise a process's oom_score_adj: it may be killed after the agent", "pid", pid, "err", oerr)
			}
		}
		return pid, err
	}, onExit)
	closeAll()
	if err != nil {
		io.closeAll()
		return 0, nil, startError(spec, err)
	}
	return pid, &io, nil
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
	err := os.WriteFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid), []byte(strconv.Itoa(childOOMScoreAdj)), 0)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return nil // it exited already
	}
	return err
}

// startError maps a failed fork/exec to a public error.
func startError(spec *spawnSpec, err error) error {
	argv0 := spec.argv[0]
	switch {
	case errors.Is(err, syscall.ENOENT):
		return &rpcError{kind: kindNotFound, reason: "command_not_found", subject: argv0,
			msg: fmt.Sprintf("command %q (or its interpreter) not found", argv0), cause: err}
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return &rpcError{kind: kindPermission, reason: "command_not_executable", subject: argv0,
			msg: fmt.Sprintf("command %q cannot be run", argv0), cause: err}
	case errors.Is(err, syscall.ENOEXEC):
		return &rpcError{kind: kindFailedPrecondition, reason: "exec_format_error", subject: argv0,
			msg: fmt.Sprintf("command %q is not in an executable format", argv0), cause: err}
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.ENOMEM):
		return &rpcError{kind: kindResourceExhausted, reason: "process_limit", subject: argv0,
			msg: "the sandbox has reached its process limit, so it cannot start more processes: stop some (paddock ps, paddock kill), kill everything but the agent (paddock kill --all, or POST …/processes/kill-all), or reset the runtime", cause: err}
	}
	return &rpcError{kind: kindInternal, reason: "start_failed", subject: argv0,
		msg: fmt.Sprintf("cannot start %q", argv0), cause: err}
}
