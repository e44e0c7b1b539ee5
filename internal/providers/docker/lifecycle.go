package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// Start starts the container and waits, bounded by Config.StartTimeout and
// ctx, until its agent answers GET /healthz as the sandbox's verified agent
// (see identity.go); then the sandbox's run directory is locked. Starting a
// running sandbox only waits for its agent; starting a paused one is a
// failed precondition. If the container exits while we wait, the error
// (kind failed precondition, code sandbox_exited) carries its exit code and
// the tail of its logs in the cause.
func (p *Provider) Start(ctx context.Context, h provider.Handle) error {
	st, err := p.decodeHandle(h)
	if err != nil {
		return err
	}
	key, err := st.key()
	if err != nil {
		return err
	}
	c, err := p.lookup(ctx, h.ID)
	if err != nil {
		return err
	}
	sockDir := socketDirOf(st, &c)
	if sockDir == "" {
		return errdefs.FailedPrecondition(CodeAgentUnavailable, "the sandbox has no agent socket directory")
	}
	switch p.statusOf(c.State).State {
	case provider.StatePaused:
		return errdefs.FailedPrecondition(CodeSandboxPaused, "the sandbox is paused; resume it instead")
	case provider.StateStopped:
		// Nothing of an earlier run may stay (a socket would answer
		// nothing), and the agent gets its key before anything else runs.
		if !p.ownedSocketDir(sockDir) {
			return errdefs.FailedPrecondition("run_dir_unusable", "the sandbox's socket directory is not under this server's run directory")
		}
		if err := p.prepareRunDir(ctx, sockDir, key, st.Trust); err != nil {
			return errdefs.FailedPrecondition("run_dir_unusable", "the sandbox's socket directory cannot be prepared").WithCause(err)
		}
		p.forgetPID(h.ID)
		if err := p.cli.ContainerStart(ctx, h.ID, container.StartOptions{}); err != nil {
			if cerrdefs.IsNotFound(err) {
				return notFound(h.ID, err)
			}
			if p.gvisor() {
				// runsc leaves the shim and sandbox of a failed start running,
				// and removing the container does not end them; only the
				// host's operator can (runsc delete --force, then containerd's
				// task and container delete, by this id).
				p.logger.ErrorContext(ctx, "runsc failed to start a sandbox and may have left its processes on the engine's host", "container", h.ID, "err", err)
			}
			return engineErr("start", err)
		}
	}
	start := time.Now()
	if err := p.waitAgent(ctx, h.ID, sockDir, key); err != nil {
		return err
	}
	if err := p.machine.lockRunDir(ctx, sockDir); err != nil {
		return errdefs.FailedPrecondition("run_dir_unusable", "the sandbox's socket directory cannot be locked").WithCause(err)
	}
	p.logger.DebugContext(ctx, "sandbox started", "container", h.ID, "agent_ready_after", time.Since(start))
	return nil
}

// prepareRunDir empties a sandbox's run directory, gives it back to the
// sandbox and writes the agent's key file, and the CA it trusts, into it.
func (p *Provider) prepareRunDir(ctx context.Context, dir string, key []byte, trust string) error {
	if err := p.machine.unlockRunDir(ctx, dir); err != nil {
		return err
	}
	if trust != "" {
		if err := p.machine.writeFile(ctx, filepath.Join(dir, trustName), []byte(trust), 0o444); err != nil {
			return err
		}
	}
	if key == nil {
		return nil
	}
	return p.machine.writeFile(ctx, filepath.Join(dir, agentauth.KeyFileName), []byte(agentauth.EncodeKey(key)+"\n"), 0o600)
}

// Pause freezes a running container. Pausing a paused sandbox is not an
// error; pausing a stopped one is a failed precondition.
func (p *Provider) Pause(ctx context.Context, h provider.Handle) error {
	if _, err := p.decodeHandle(h); err != nil {
		return err
	}
	c, err := p.lookup(ctx, h.ID)
	if err != nil {
		return err
	}
	if c, err = p.engineAgrees(ctx, c); err != nil {
		return err
	}
	switch p.statusOf(c.State).State {
	case provider.StatePaused:
		return nil
	case provider.StateStopped:
		return errdefs.FailedPrecondition(CodeSandboxNotRunning, "the sandbox is not running")
	}
	if err := p.cli.ContainerPause(ctx, h.ID); err != nil {
		return p.settle(ctx, h.ID, "pause", provider.StatePaused, err)
	}
	return nil
}

// Resume thaws a paused container. Resuming a running sandbox is not an
// error; resuming a stopped one is a failed precondition.
func (p *Provider) Resume(ctx context.Context, h provider.Handle) error {
	if _, err := p.decodeHandle(h); err != nil {
		return err
	}
	c, err := p.lookup(ctx, h.ID)
	if err != nil {
		return err
	}
	if c, err = p.engineAgrees(ctx, c); err != nil {
		return err
	}
	switch p.statusOf(c.State).State {
	case provider.StatePaused:
	case provider.StateRunning:
		return nil
	default:
		return errdefs.FailedPrecondition(CodeSandboxNotRunning, "the sandbox is not running")
	}
	if err := p.cli.ContainerUnpause(ctx, h.ID); err != nil {
		return p.settle(ctx, h.ID, "resume", provider.StateRunning, err)
	}
	return nil
}

// settle decides what a failed pause or unpause means: success if a
// concurrent call already reached want, not found if the container went
// away, else the engine's error.
func (p *Provider) settle(ctx context.Context, id, op string, want provider.State, opErr error) error {
	c, err := p.lookup(ctx, id)
	if err != nil {
		return err
	}
	if p.statusOf(c.State).State == want {
		return nil
	}
	if cerrdefs.IsConflict(opErr) {
		return errdefs.FailedPrecondition(CodeSandboxNotRunning, "the sandbox is not running").WithCause(opErr)
	}
	return engineErr(op, opErr)
}

// Destroy removes the container (killing it) and its socket directory. The
// workspace volume is kept. A container that is already gone is not an
// error.
func (p *Provider) Destroy(ctx context.Context, h provider.Handle) error {
	st, err := p.decodeHandle(h)
	if err != nil {
		return err
	}
	c, err := p.lookup(ctx, h.ID)
	switch {
	case errdefs.IsNotFound(err):
		// Gone already (removed outside paddock, or a Destroy that stopped
		// between the removal and the release): its disk still goes.
		p.removeSocketDir(ctx, socketDirOf(st, nil))
		if st.Workspace != "" {
			p.releaseDisk(ctx, st.Workspace)
		}
		return nil
	case err != nil:
		return err
	}
	if p.gvisor() && p.statusOf(c.State).State == provider.StatePaused {
		// A paused gVisor sandbox does not die of SIGKILL: the engine waits
		// 10 s for it, removes the container anyway, and leaves its shim
		// and sandbox processes behind, paused for good. Thawed first, it
		// dies at once. (A concurrent Resume may win: conflict.)
		if err := p.cli.ContainerUnpause(ctx, h.ID); err != nil && !cerrdefs.IsConflict(err) && !cerrdefs.IsNotFound(err) {
			return engineErr("destroy", err)
		}
	}
	err = p.cli.ContainerRemove(ctx, h.ID, container.RemoveOptions{Force: true})
	switch {
	case err == nil, cerrdefs.IsNotFound(err):
	case cerrdefs.IsConflict(err):
		// Removal already in progress: a concurrent Destroy owns it.
		p.logger.DebugContext(ctx, "container removal already in progress", "container", h.ID, "err", err)
	default:
		return engineErr("destroy", err)
	}
	p.forgetPID(h.ID)
	p.removeSocketDir(ctx, socketDirOf(st, &c))
	for _, m := range c.Mounts {
		if m.Type == mount.TypeVolume && m.Destination == provider.WorkspacePath {
			p.releaseDisk(ctx, m.Name)
		}
	}
	p.logger.DebugContext(ctx, "sandbox destroyed", "container", h.ID)
	return nil
}

// removeSocketDir removes a sandbox's socket directory, only ever one
// directly under RunDir.
func (p *Provider) removeSocketDir(ctx context.Context, dir string) {
	if dir == "" {
		return
	}
	if !p.ownedSocketDir(dir) {
		p.logger.WarnContext(ctx, "not removing a socket directory outside the run directory", "dir", dir, "run_dir", p.cfg.RunDir)
		return
	}
	if err := p.machine.removeAll(ctx, dir); err != nil {
		p.logger.WarnContext(ctx, "removing a sandbox socket directory", "dir", dir, "err", err)
	}
}

// Inspect reports the container's state. A container that is gone (or is
// not paddock's) is not found.
func (p *Provider) Inspect(ctx context.Context, h provider.Handle) (provider.Status, error) {
	if _, err := p.decodeHandle(h); err != nil {
		return provider.Status{}, err
	}
	c, err := p.lookup(ctx, h.ID)
	if err != nil {
		return provider.Status{}, err
	}
	return p.statusOf(c.State), nil
}

// parseTime parses a Docker timestamp; the engine's zero time and anything
// unreadable give the zero time.Time.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1 {
		return time.Time{}
	}
	return t
}

// describeExit summarizes how a container ended, for causes.
func describeExit(code int64, msg, logs string) error {
	s := fmt.Sprintf("container exited with code %d", code)
	if msg != "" {
		s += ": " + msg
	}
	if logs != "" {
		s += "; last log lines:\n" + logs
	}
	return errors.New(s)
}

// AgentLog returns the last tail lines the agent (the container's init)
// wrote: the engine keeps them, bounded (see the log options in
// containerConfig).
func (p *Provider) AgentLog(ctx context.Context, h provider.Handle, tail int) (string, error) {
	if _, err := p.decodeHandle(h); err != nil {
		return "", err
	}
	if _, err := p.lookup(ctx, h.ID); err != nil {
		return "", err
	}
	if tail <= 0 {
		tail = 200
	}
	rc, err := p.cli.ContainerLogs(ctx, h.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true, Timestamps: true, Tail: fmt.Sprint(tail)})
	if err != nil {
		return "", engineErr("read the log of", err)
	}
	defer rc.Close()
	var buf bytes.Buffer
	// Containers run without a TTY, so the stream is multiplexed.
	if _, err := stdcopy.StdCopy(&buf, &buf, io.LimitReader(rc, 1<<20)); err != nil {
		return "", engineErr("read the log of", err)
	}
	return buf.String(), nil
}
