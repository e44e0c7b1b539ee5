package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// DialAgent opens a stream to the sandbox's agent: TCP to the Pod's IP on
// AgentPort, from any replica on any node, then TLS with both ends pinned
// to the sandbox's key and the agentauth handshake inside
// (agentauth.DialTLS). Whatever answers without the key (another Pod at a
// reused IP, anything else) is refused with agent_unverified. The sandbox
// must be running; otherwise the error is of kind unavailable.
func (p *Provider) DialAgent(ctx context.Context, h provider.Handle) (net.Conn, error) {
	st, err := p.decodeHandle(h)
	if err != nil {
		return nil, err
	}
	pod, err := p.cached(ctx, st)
	if err != nil {
		return nil, err
	}
	if pod.Status.Phase != corev1.PodRunning || len(podAddrs(pod)) == 0 {
		// The informer may lag behind the API server (another replica
		// started the Pod a moment ago): ask it before saying no.
		if pod, err = p.lookup(ctx, st); err != nil {
			return nil, err
		}
	}
	addrs := podAddrs(pod)
	if pod.Status.Phase != corev1.PodRunning || len(addrs) == 0 {
		return nil, errdefs.Unavailable(CodeAgentUnavailable, "the sandbox is not running")
	}
	key, err := p.agentKey(ctx, st, pod)
	if err != nil {
		return nil, err
	}
	conn, derr := agentauth.DialTLS(ctx, net.JoinHostPort(addrs[0].String(), strconv.Itoa(AgentPort)), key)
	if derr == nil {
		return conn, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// Say why: the Pod may have stopped or gone.
	pod, err = p.lookup(ctx, st)
	if err != nil {
		return nil, err
	}
	if pod.Status.Phase != corev1.PodRunning {
		return nil, errdefs.Unavailable(CodeAgentUnavailable, "the sandbox is not running").WithCause(derr)
	}
	if errors.Is(derr, agentauth.ErrUnverified) {
		p.logger.ErrorContext(ctx, "refused a sandbox agent that failed its identity check", "pod", st.Pod, "reason", derr.Error())
		return nil, errdefs.Unavailable(CodeAgentUnverified, "the sandbox's agent failed its identity check; reset the runtime (its workspace is kept)").WithCause(derr)
	}
	return nil, errdefs.Unavailable(CodeAgentUnavailable, "the sandbox's agent is not reachable").WithCause(derr)
}

// AgentLog returns the last tail lines the agent (the sandbox container's
// PID 1) wrote, as the kubelet keeps them.
func (p *Provider) AgentLog(ctx context.Context, h provider.Handle, tail int) (string, error) {
	st, err := p.decodeHandle(h)
	if err != nil {
		return "", err
	}
	if _, err := p.lookup(ctx, st); err != nil {
		return "", err
	}
	if tail <= 0 {
		tail = 200
	}
	lines := int64(tail)
	rc, err := p.cs.CoreV1().Pods(p.cfg.Namespace).GetLogs(st.Pod, &corev1.PodLogOptions{Container: sandboxName, TailLines: &lines, Timestamps: true}).Stream(ctx)
	if err != nil {
		return "", apiErr("read the log of", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return "", apiErr("read the log of", fmt.Errorf("reading the log stream: %w", err))
	}
	return string(b), nil
}
