package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

const (
	// agentPollInterval is how often Start probes a running Pod's agent.
	agentPollInterval = 50 * time.Millisecond
	// recheckInterval is how often a wait reads the API server itself,
	// should the informer lag.
	recheckInterval = time.Second
	// probeTimeout bounds one health probe.
	probeTimeout = 2 * time.Second
	// logTailLines is how many log lines a start failure's cause keeps.
	logTailLines = 20
)

// waitAgent waits until the Pod of st runs and its agent answers, the Pod
// fails, wctx's deadline (Config.StartTimeout) passes, or ctx is done.
// The informer's changes wake it.
func (p *Provider) waitAgent(ctx, wctx context.Context, st handleState, key []byte) error {
	tick := time.NewTicker(recheckInterval)
	defer tick.Stop()
	var lastErr error
	for {
		changed := p.changes.wait()
		pod, err := p.cached(wctx, st)
		if err != nil {
			if ctx.Err() == nil && wctx.Err() != nil {
				return errdefs.Unavailable(CodeAgentNotReady, "the sandbox's Pod did not start within %s", p.cfg.StartTimeout).WithCause(err)
			}
			return err
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			return p.exited(ctx, pod)
		}
		if err := startFailure(pod); err != nil {
			return err
		}
		var poll <-chan time.Time
		if ip := podAddrs(pod); pod.Status.Phase == corev1.PodRunning && len(ip) > 0 {
			if lastErr = probeHealth(wctx, net.JoinHostPort(ip[0].String(), strconv.Itoa(AgentPort)), key); lastErr == nil {
				return nil
			}
			poll = time.After(agentPollInterval)
		}
		select {
		case <-changed:
		case <-poll:
		case <-tick.C:
		case <-wctx.Done():
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("waiting for the sandbox agent: %w", err)
		}
		if wctx.Err() != nil {
			return p.notReady(context.WithoutCancel(ctx), pod, lastErr)
		}
	}
}

// imageReasons are the kubelet's reasons for a container whose image it
// cannot have.
var imageReasons = []string{"ErrImageNeverPull", "InvalidImageName", "ErrImagePull", "ImagePullBackOff", "ImageInspectError", "RegistryUnavailable"}

// fatalReasons are reasons for a waiting container that waiting does not
// cure: the image is not on the node and will not be pulled, or the
// container cannot be made at all.
var fatalReasons = []string{"ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "RunContainerError"}

// startFailure is the error for a Pod that cannot start whatever we wait,
// nil for one that may.
func startFailure(pod *corev1.Pod) error {
	for _, c := range allStatuses(pod) {
		w := c.State.Waiting
		if w == nil || !slices.Contains(fatalReasons, w.Reason) {
			continue
		}
		return waitingErr(pod, c)
	}
	return nil
}

// waitingErr is the error for a container of pod that waits for reason.
func waitingErr(pod *corev1.Pod, c corev1.ContainerStatus) error {
	w := c.State.Waiting
	cause := fmt.Errorf("pod %s container %s: %s: %s", pod.Name, c.Name, w.Reason, w.Message)
	if slices.Contains(imageReasons, w.Reason) {
		return errdefs.FailedPrecondition(CodeImageNotFound, "image %q is not available on the cluster (%s)", c.Image, w.Reason).WithCause(cause)
	}
	return errdefs.FailedPrecondition(CodeSandboxFailed, "the sandbox's container %s cannot start (%s)", c.Name, w.Reason).WithCause(cause)
}

// allStatuses are the statuses of the Pod's init and sandbox containers.
func allStatuses(pod *corev1.Pod) []corev1.ContainerStatus {
	return append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
}

// notReady is the error for a Pod whose agent did not answer in time: why
// the Pod is not running, when the cluster says (it cannot be scheduled,
// its image cannot be pulled), with its latest warnings in the cause.
func (p *Provider) notReady(ctx context.Context, pod *corev1.Pod, lastErr error) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	warnings := p.warnings(ctx, pod)
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return errdefs.FailedPrecondition(CodeSandboxUnschedulable, "no node of the cluster can take the sandbox within %s: %s", p.cfg.StartTimeout, c.Message).
				WithCause(fmt.Errorf("pod %s unschedulable: %s%s", pod.Name, c.Message, warnings))
		}
	}
	for _, c := range allStatuses(pod) {
		if w := c.State.Waiting; w != nil && slices.Contains(imageReasons, w.Reason) {
			return waitingErr(pod, c)
		}
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("pod %s is %s", pod.Name, pod.Status.Phase)
	}
	return errdefs.Unavailable(CodeAgentNotReady, "the sandbox's agent did not become ready within %s", p.cfg.StartTimeout).
		WithCause(fmt.Errorf("%w%s", lastErr, warnings))
}

// warnings are the last Warning events about pod, one a line, or "".
func (p *Provider) warnings(ctx context.Context, pod *corev1.Pod) string {
	evs, err := p.cs.CoreV1().Events(p.cfg.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.name": pod.Name, "involvedObject.uid": string(pod.UID), "type": corev1.EventTypeWarning}.String(),
	})
	if err != nil || len(evs.Items) == 0 {
		return ""
	}
	items := evs.Items[max(0, len(evs.Items)-5):]
	var b strings.Builder
	b.WriteString("; warnings:")
	for _, e := range items {
		fmt.Fprintf(&b, "\n%s: %s", e.Reason, e.Message)
	}
	return b.String()
}

// exited is the error for a Pod that ended: which container, its exit
// code and reason, and the tail of its log in the cause.
func (p *Provider) exited(ctx context.Context, pod *corev1.Pod) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	desc := strings.TrimSpace("pod " + pod.Name + " " + string(pod.Status.Phase) + " " + pod.Status.Reason + " " + pod.Status.Message)
	for _, c := range allStatuses(pod) {
		t := c.State.Terminated
		if t == nil || (t.ExitCode == 0 && c.Name == installName) {
			continue
		}
		desc += fmt.Sprintf("; container %s exited with code %d (%s) %s", c.Name, t.ExitCode, t.Reason, t.Message)
		if logs := p.logTail(ctx, pod.Name, c.Name, logTailLines); logs != "" {
			desc += "; last log lines:\n" + logs
		}
		break
	}
	return errdefs.FailedPrecondition(CodeSandboxExited, "the sandbox exited while starting").WithCause(errors.New(desc))
}

// logTail returns the last lines of a container's log, best effort.
func (p *Provider) logTail(ctx context.Context, pod, container string, lines int64) string {
	rc, err := p.cs.CoreV1().Pods(p.cfg.Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &lines}).Stream(ctx)
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 64<<10))
	return strings.TrimSpace(string(b))
}

// waitGone waits until pod is gone from the API server. A Pod still there
// after Config.StartTimeout (its node does not answer) is deleted at once,
// without waiting for its kubelet.
func (p *Provider) waitGone(ctx context.Context, pod *corev1.Pod) error {
	tick := time.NewTicker(recheckInterval)
	defer tick.Stop()
	force := time.NewTimer(p.cfg.StartTimeout)
	defer force.Stop()
	recheck := false
	for {
		changed := p.changes.wait()
		if c, err := p.pods.Get(pod.Name); recheck || err != nil || c.UID != pod.UID {
			got, err := p.cs.CoreV1().Pods(p.cfg.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) || (err == nil && got.UID != pod.UID) {
				return nil
			}
		}
		recheck = false
		select {
		case <-changed:
		case <-tick.C:
			recheck = true // the informer may lag: ask the API server
		case <-force.C:
			p.logger.WarnContext(ctx, "a sandbox's Pod outlived its grace period; deleting it without its node", "pod", pod.Name, "node", pod.Spec.NodeName)
			if err := p.deletePod(ctx, pod, true); err != nil {
				return err
			}
		case <-ctx.Done():
			return fmt.Errorf("waiting for the sandbox's Pod to go: %w", ctx.Err())
		}
	}
}

// probeHealth dials the agent at addr over the agent link and asks GET
// /healthz once.
func probeHealth(ctx context.Context, addr string, key []byte) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	tr := provider.AgentTransport(func(ctx context.Context) (net.Conn, error) {
		return agentauth.DialTLS(ctx, addr, key)
	})
	defer tr.CloseIdleConnections()
	return provider.ProbeAgent(ctx, &http.Client{Transport: tr})
}
