package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// CodeAgentUnverified is the public code of a refused agent: whatever
// answered on the sandbox's socket is not the agent paddock provisioned for
// that sandbox.
const CodeAgentUnverified = "agent_unverified"

// lockedOwner owns a sandbox's run directory once its agent is listening:
// a uid no sandbox process runs as, so with every capability dropped
// nothing in the sandbox can add, remove or replace an entry there (the
// socket cannot be swapped for a link to another sandbox's, and the
// directory cannot be used to fill the host's disk).
const lockedOwner = 2147483646

// How a sandbox's agent is told apart from anything else (see
// docs/ARCHITECTURE.md, "The agent link"):
//
//  1. The socket is opened without following links: the directory with
//     O_NOFOLLOW, the socket with O_PATH|O_NOFOLLOW, and the inode must be a
//     socket; the connection is then made through /proc/self/fd, to exactly
//     that inode. A link planted in the directory is refused.
//  2. The peer's credentials (SO_PEERCRED) must name the container's init
//     process, the agent, which runs as PID 1 — not another process in the
//     sandbox that bound a socket of its own, and not another sandbox.
//  3. The agent proves it holds the sandbox's key (agentauth handshake).
//
// Under gVisor the host socket is bound by the sandbox's gofer (runsc
// --host-uds=create), whichever process in the sandbox listens on it, so
// the peer credentials name the gofer and tell nothing of the agent; only
// 1 and 3 apply there.

// dialVerified opens a connection to the agent in sockDir and proves it is
// the agent of container id. key may be nil for sandboxes created before
// keys existed; then the peer credentials must be checkable.
func (p *Provider) dialVerified(ctx context.Context, id, sockDir string, key []byte) (net.Conn, error) {
	conn, peerChecked, err := p.machine.dialAgent(ctx, sockDir)
	if err != nil {
		return nil, err
	}
	if err := p.verifyAgent(ctx, id, conn, key, peerChecked); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

func (p *Provider) verifyAgent(ctx context.Context, id string, conn net.Conn, key []byte, peerCheckable bool) error {
	checkedPeer := false
	if peerCheckable && !p.gvisor() {
		pid, err := p.initPID(ctx, id)
		if err != nil {
			return err
		}
		peer, err := peerPID(conn)
		if err != nil {
			return p.refuse(ctx, id, fmt.Errorf("reading the peer's credentials: %w", err))
		}
		if peer != pid {
			return p.refuse(ctx, id, fmt.Errorf("the socket is served by pid %d, not by the container's init (pid %d)", peer, pid))
		}
		checkedPeer = true
	}
	if key == nil {
		if !checkedPeer {
			return p.refuse(ctx, id, errors.New("the sandbox has no agent key and its peer cannot be checked"))
		}
		return nil
	}
	if err := agentauth.Verify(ctx, conn, key); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("verifying the sandbox agent: %w", ctx.Err())
		}
		return p.refuse(ctx, id, err)
	}
	return nil
}

// refuse reports a failed identity check: loudly in the log (it means
// something in the sandbox tried to redirect the control plane, or the
// sandbox is broken) and as an unavailable agent to the caller.
func (p *Provider) refuse(ctx context.Context, id string, cause error) error {
	p.logger.ErrorContext(ctx, "refused a sandbox agent that failed its identity check", "container", id, "reason", cause.Error())
	return errdefs.Unavailable(CodeAgentUnverified, "the sandbox's agent failed its identity check; reset the runtime (its workspace is kept)").WithCause(cause)
}

// dialSocketNoFollow connects to dir/agent.sock without following a link
// at either step.
func dialSocketNoFollow(ctx context.Context, dir string) (net.Conn, error) {
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, socketName, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(dir, socketName), Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: filepath.Join(dir, socketName), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil, errNotASocket
	}
	var d net.Dialer
	return d.DialContext(ctx, "unix", "/proc/self/fd/"+strconv.Itoa(fd))
}

// errNotASocket: the agent's socket path holds something else (a link, a
// file) — never the agent's doing.
var errNotASocket = errors.New("the agent's socket path is not a socket")

// peerPID returns the pid of the process that listens on the other end of
// a unix connection.
func peerPID(conn net.Conn) (int, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("not a unix connection: %T", conn)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if serr != nil {
		return 0, serr
	}
	return int(cred.Pid), nil
}

// initPID returns the host pid of a running or paused container's init
// process, the agent. It never changes while the container lives (a
// sandbox's container is never restarted in place), so it is cached until
// Destroy.
func (p *Provider) initPID(ctx context.Context, id string) (int, error) {
	p.pidMu.Lock()
	pid, ok := p.pids[id]
	p.pidMu.Unlock()
	if ok {
		return pid, nil
	}
	c, err := p.lookup(ctx, id)
	if err != nil {
		return 0, err
	}
	if s := p.statusOf(c.State).State; s != provider.StateRunning && s != provider.StatePaused || c.State.Pid <= 0 {
		return 0, errdefs.Unavailable(CodeAgentUnavailable, "the sandbox is not running")
	}
	p.pidMu.Lock()
	p.pids[id] = c.State.Pid
	p.pidMu.Unlock()
	return c.State.Pid, nil
}

// forgetPID drops a container's cached init pid.
func (p *Provider) forgetPID(id string) {
	p.pidMu.Lock()
	delete(p.pids, id)
	p.pidMu.Unlock()
}

// lockRunDir takes a sandbox's run directory away from the sandbox once its
// agent listens: the key file is gone (the agent deleted it; this makes
// sure), and the directory and the files in it belong to lockedOwner, the
// directory with mode 0555.
func lockRunDir(dir string) error {
	if err := os.Remove(filepath.Join(dir, agentauth.KeyFileName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	// The files the agent and the provider wrote there (the CA bundle)
	// are taken away too: the sandbox reads them, it cannot change them.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := os.Lchown(filepath.Join(dir, e.Name()), lockedOwner, lockedOwner); err != nil {
				return err
			}
		}
	}
	if err := os.Lchown(dir, lockedOwner, lockedOwner); err != nil {
		return err
	}
	return os.Chmod(dir, 0o555)
}

// unlockRunDir gives a stopped sandbox's run directory back to it before
// its agent starts again: empty of anything an earlier run left, owned by
// root and writable, so the agent can listen there.
func unlockRunDir(dir string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	if err := os.Lchown(dir, 0, 0); err != nil {
		return err
	}
	// Shared with the sandbox only: its agent may run as any user and has
	// no capabilities to bypass permissions. The parent RunDir is 0700.
	return os.Chmod(dir, 0o777)
}
