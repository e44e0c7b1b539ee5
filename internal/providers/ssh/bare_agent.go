package ssh

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
)

// DialAgent dials the agent's socket through the SSH connection and has
// it prove the sandbox's key.
func (b *bare) DialAgent(ctx context.Context, h provider.Handle) (net.Conn, error) {
	id, key, err := b.decode(h)
	if err != nil {
		return nil, err
	}
	s, err := b.one(ctx, id)
	if err != nil {
		return nil, err
	}
	if !s.Rec.Started || !s.Alive {
		return nil, errdefs.Unavailable(docker.CodeAgentUnavailable, "the sandbox is not running")
	}
	if key == nil {
		return nil, errdefs.Unavailable(docker.CodeAgentUnverified, "the handle holds no agent key: the sandbox's agent cannot be verified")
	}
	return b.dialVerified(ctx, id, key)
}

func (b *bare) dialVerified(ctx context.Context, id string, key []byte) (net.Conn, error) {
	conn, err := b.p.conn.DialUnix(ctx, path.Join(b.dir(id), "agent.sock"))
	if err != nil {
		if _, ok := errdefs.Public(err); ok {
			return nil, err
		}
		return nil, errdefs.Unavailable(docker.CodeAgentUnavailable, "the sandbox's agent is not reachable").WithCause(err)
	}
	if err := agentauth.Verify(ctx, conn, key); err != nil {
		_ = conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b.p.logger.ErrorContext(ctx, "refused a sandbox agent that failed its identity check", "sandbox", id, "reason", err.Error())
		return nil, errdefs.Unavailable(docker.CodeAgentUnverified, "the sandbox's agent failed its identity check").WithCause(err)
	}
	return conn, nil
}

// waitAgent waits until the agent answers GET /healthz, its process ends,
// the start timeout passes or ctx is done. An agent that ended is said
// with the end of its log.
func (b *bare) waitAgent(ctx context.Context, id string, key []byte) error {
	wctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	tr := provider.AgentTransport(func(ctx context.Context) (net.Conn, error) { return b.dialVerified(ctx, id, key) })
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		pctx, pcancel := context.WithTimeout(wctx, 2*time.Second)
		lastErr = provider.ProbeAgent(pctx, hc)
		pcancel()
		if lastErr == nil {
			return nil
		}
		s, err := b.one(wctx, id)
		if err == nil && !s.Alive {
			log, _ := b.agentLog(context.WithoutCancel(ctx), id, 20)
			return errdefs.FailedPrecondition(docker.CodeSandboxExited, "the sandbox's agent exited while starting").
				WithCause(fmt.Errorf("%w; its log: %s", lastErr, strings.TrimSpace(log)))
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("waiting for the sandbox agent: %w", ctx.Err())
			}
			return errdefs.Unavailable(docker.CodeAgentNotReady, "the sandbox's agent did not become ready within %s", b.timeout).WithCause(lastErr)
		case <-tick.C:
		}
	}
}

// agentLog is the last tail lines the agent wrote.
func (b *bare) agentLog(ctx context.Context, id string, tail int) (string, error) {
	out, err := b.p.conn.Run(ctx, nil, "sh", "-c", `[ ! -f "$1" ] || tail -n "$2" -- "$1"`, "sh",
		path.Join(b.dir(id), "agent.log"), strconv.Itoa(max(tail, 1)))
	if err != nil {
		return "", b.machineErr("read the agent's log", err)
	}
	return string(out), nil
}

// AgentLog is the last tail lines the sandbox's agent wrote.
func (b *bare) AgentLog(ctx context.Context, h provider.Handle, tail int) (string, error) {
	id, _, err := b.decode(h)
	if err != nil {
		return "", err
	}
	if _, err := b.one(ctx, id); err != nil {
		return "", err
	}
	return b.agentLog(ctx, id, tail)
}

// Capacity is the machine's cores and memory.
func (b *bare) Capacity(ctx context.Context) (provider.Resources, error) {
	out, err := b.p.conn.Run(ctx, nil, "sh", "-c", `nproc; awk '/^MemTotal:/ {print $2}' /proc/meminfo`)
	if err != nil {
		return provider.Resources{}, b.machineErr("read the machine's size", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return provider.Resources{}, fmt.Errorf("the machine's size cannot be read from %q", out)
	}
	cores, err1 := strconv.ParseInt(f[0], 10, 64)
	memKB, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return provider.Resources{}, fmt.Errorf("the machine's size cannot be read from %q", out)
	}
	return provider.Resources{CPUMillis: cores * 1000, MemoryMB: memKB / 1024}, nil
}
