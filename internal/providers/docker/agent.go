package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

const (
	// agentPollInterval is how often Start probes the agent while waiting
	// on a machine reached over SSH, and on this host once fastPollFor
	// has passed.
	agentPollInterval = 25 * time.Millisecond
	// fastPollInterval is how often Start probes an agent on this host
	// during its first fastPollFor: a probe before the agent listens is
	// a failed open of its socket, so a fine poll costs next to nothing
	// and a start waits at most this long past the agent's readiness.
	fastPollInterval = 2 * time.Millisecond
	fastPollFor      = time.Second
	// probeTimeout bounds one health probe.
	probeTimeout = 2 * time.Second
	// logTailLines is how many log lines a start failure's cause keeps.
	logTailLines = 20
)

// DialAgent opens a stream to the sandbox's agent over its unix socket and
// proves that the agent answering is the one provisioned for this sandbox
// (see identity.go); anything else is refused with agent_unverified. The
// sandbox must be running (a paused agent cannot answer the proof until it
// is resumed); otherwise the error is of kind unavailable.
func (p *Provider) DialAgent(ctx context.Context, h provider.Handle) (net.Conn, error) {
	st, err := p.decodeHandle(h)
	if err != nil {
		return nil, err
	}
	key, err := st.key()
	if err != nil {
		return nil, err
	}
	dir := st.SocketDir
	if dir == "" {
		c, err := p.lookup(ctx, h.ID)
		if err != nil {
			return nil, err
		}
		if dir = socketDirOf(st, &c); dir == "" {
			return nil, errdefs.Unavailable(CodeAgentUnavailable, "the sandbox has no agent socket")
		}
	}
	conn, derr := p.dialVerified(ctx, h.ID, dir, key)
	if derr == nil {
		return conn, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if _, ok := errdefs.Public(derr); ok {
		return nil, derr
	}
	// Say why: the sandbox may have stopped or gone.
	c, err := p.lookup(ctx, h.ID)
	if err != nil {
		return nil, err
	}
	if s := p.statusOf(c.State).State; s != provider.StateRunning && s != provider.StatePaused {
		return nil, errdefs.Unavailable(CodeAgentUnavailable, "the sandbox is not running").WithCause(derr)
	}
	if errors.Is(derr, errNotASocket) {
		return nil, p.refuse(ctx, h.ID, derr)
	}
	return nil, errdefs.Unavailable(CodeAgentUnavailable, "the sandbox's agent is not reachable").WithCause(derr)
}

// waitAgent waits until the agent on sock answers GET /healthz, the
// container exits, Config.StartTimeout passes, or ctx is done.
func (p *Provider) waitAgent(ctx context.Context, id, sockDir string, key []byte) error {
	wctx, cancel := context.WithTimeout(ctx, p.cfg.StartTimeout)
	defer cancel()
	// Waiting for "not-running" after the start is race-free: a container
	// that already exited answers at once.
	exitCh, waitErrCh := p.cli.ContainerWait(wctx, id, container.WaitConditionNotRunning)

	tr := p.agentTransport(id, sockDir, key)
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	every, slowAt := agentPollInterval, time.Now()
	if p.cfg.Machine == nil {
		every, slowAt = fastPollInterval, slowAt.Add(fastPollFor)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()

	var lastErr error
	for {
		if lastErr = probeHealth(wctx, hc); lastErr == nil {
			return nil
		}
		select {
		case res := <-exitCh:
			msg := ""
			if res.Error != nil {
				msg = res.Error.Message
			}
			return p.exited(ctx, id, res.StatusCode, msg)
		case err := <-waitErrCh:
			if wctx.Err() == nil {
				// Keep probing until the deadline without the exit watch.
				p.logger.DebugContext(ctx, "watching the container for exit failed", "container", id, "err", err)
				exitCh, waitErrCh = nil, nil
			}
		case <-wctx.Done():
		case <-tick.C:
			if every != agentPollInterval && time.Now().After(slowAt) {
				every = agentPollInterval
				tick.Reset(every)
			}
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("waiting for the sandbox agent: %w", err)
		}
		if wctx.Err() != nil {
			// The container may have exited just as time ran out: say so.
			if c, err := p.lookup(context.WithoutCancel(ctx), id); err == nil && !c.State.Running {
				return p.exited(ctx, id, int64(c.State.ExitCode), c.State.Error)
			}
			return errdefs.Unavailable(CodeAgentNotReady, "the sandbox's agent did not become ready within %s", p.cfg.StartTimeout).WithCause(lastErr)
		}
	}
}

// exited is the error for a container that stopped during Start.
func (p *Provider) exited(ctx context.Context, id string, code int64, msg string) error {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	logs := p.logTail(lctx, id)
	return errdefs.FailedPrecondition(CodeSandboxExited, "the sandbox exited while starting").WithCause(describeExit(code, msg, logs))
}

// logTail returns the last lines of a container's output, best effort.
func (p *Provider) logTail(ctx context.Context, id string) string {
	rc, err := p.cli.ContainerLogs(ctx, id, container.LogsOptions{
		ShowStdout: true,
		ShowStderr: true,
		Tail:       fmt.Sprint(logTailLines),
	})
	if err != nil {
		return ""
	}
	defer rc.Close()
	var buf bytes.Buffer
	// Containers run without a TTY, so the stream is multiplexed.
	_, _ = stdcopy.StdCopy(&buf, &buf, io.LimitReader(rc, 64<<10))
	return strings.TrimSpace(buf.String())
}

// agentTransport speaks HTTP/2 cleartext with prior knowledge to the
// verified agent of container id.
func (p *Provider) agentTransport(id, sockDir string, key []byte) *http.Transport {
	return provider.AgentTransport(func(ctx context.Context) (net.Conn, error) {
		return p.dialVerified(ctx, id, sockDir, key)
	})
}

// probeHealth asks the agent for GET /healthz once.
func probeHealth(ctx context.Context, hc *http.Client) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return provider.ProbeAgent(ctx, hc)
}
