package kubernetes

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// Start lifts the Pod's scheduling gate and waits, bounded by
// Config.StartTimeout and ctx, until the Pod runs and its agent answers
// GET /healthz over the agent link (agentauth.DialTLS to PodIP:AgentPort).
// Starting a running sandbox only waits for its agent. A Pod that cannot
// run (its image is missing, it cannot be scheduled, its agent exited)
// fails with the reason the cluster gives; the caller destroys it.
func (p *Provider) Start(ctx context.Context, h provider.Handle) error {
	st, err := p.decodeHandle(h)
	if err != nil {
		return err
	}
	pod, err := p.lookup(ctx, st)
	if err != nil {
		return err
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return p.exited(ctx, pod)
	}
	key, err := p.agentKey(ctx, st, pod)
	if err != nil {
		return err
	}
	if len(pod.Spec.SchedulingGates) > 0 {
		if err := p.ungate(ctx, st); err != nil {
			return err
		}
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, p.cfg.StartTimeout)
	defer cancel()
	if err := p.waitAgent(ctx, wctx, st, key); err != nil {
		return err
	}
	p.logger.DebugContext(ctx, "sandbox started", "pod", st.Pod, "agent_ready_after", time.Since(start))
	return nil
}

// ungate removes the Pod's scheduling gates: the scheduler then places it.
func (p *Provider) ungate(ctx context.Context, st handleState) error {
	pods := p.cs.CoreV1().Pods(p.cfg.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := p.lookup(ctx, st)
		if err != nil {
			return err
		}
		if len(pod.Spec.SchedulingGates) == 0 {
			return nil
		}
		pod.Spec.SchedulingGates = nil
		_, err = pods.Update(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	var pub *errdefs.Error
	if err == nil || errors.As(err, &pub) {
		return err
	}
	if apierrors.IsNotFound(err) {
		return notFound(st.Pod, err)
	}
	return apiErr("start the Pod of", err)
}

// Pause is not offered: a Kubernetes Pod cannot be frozen. Expiry and idle
// archive instead (see docs/ARCHITECTURE.md).
func (p *Provider) Pause(context.Context, provider.Handle) error {
	return errdefs.NotImplemented(CodePauseNotSupported, "the kubernetes provider cannot pause a sandbox")
}

// Resume is not offered, as Pause is not.
func (p *Provider) Resume(context.Context, provider.Handle) error {
	return errdefs.NotImplemented(CodePauseNotSupported, "the kubernetes provider cannot pause or resume a sandbox")
}

// Destroy deletes the Pod and waits until it is gone (the kubelet has
// stopped its containers), then deletes its Secret and NetworkPolicy (the
// garbage collector would too: they are owned by the Pod; deleting them
// after the Pod leaves no moment when the Pod runs without its policy).
// The workspace claim is kept. A Pod that is already gone is not an error.
func (p *Provider) Destroy(ctx context.Context, h provider.Handle) error {
	st, err := p.decodeHandle(h)
	if err != nil {
		return err
	}
	pod, err := p.pods.Get(st.Pod)
	if err != nil {
		pod, err = p.cs.CoreV1().Pods(p.cfg.Namespace).Get(ctx, st.Pod, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return apiErr("read the Pod of", err)
	case !p.owns(pod.Labels), st.UID != "" && pod.UID != st.UID:
		return nil // another's, or a later sandbox's of the same name
	}
	if err := p.deletePod(ctx, pod, false); err != nil {
		return err
	}
	if err := p.waitGone(ctx, pod); err != nil {
		return err
	}
	p.deleteOwned(ctx, pod)
	p.logger.DebugContext(ctx, "sandbox destroyed", "pod", st.Pod)
	return nil
}

// deletePod deletes pod (that very Pod: its uid is a precondition) with
// its grace period, or at once (without its kubelet) when force.
func (p *Provider) deletePod(ctx context.Context, pod *corev1.Pod, force bool) error {
	opts := uidDelete(pod.UID)
	if force {
		opts.GracePeriodSeconds = ptr(int64(0))
	}
	err := p.cs.CoreV1().Pods(p.cfg.Namespace).Delete(ctx, pod.Name, opts)
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) { // conflict: the uid differs, it is gone
		return nil
	}
	return apiErr("delete the Pod of", err)
}

// deleteOwned deletes the Secret and NetworkPolicy that pod owns (those
// very objects), best effort: the garbage collector removes what this
// leaves.
func (p *Provider) deleteOwned(ctx context.Context, pod *corev1.Pod) {
	secrets := p.cs.CoreV1().Secrets(p.cfg.Namespace)
	if s, err := secrets.Get(ctx, secretName(pod.Name), metav1.GetOptions{}); err == nil && ownedBy(s.OwnerReferences, pod) {
		p.deleted(ctx, "secret", pod, secrets.Delete(ctx, s.Name, uidDelete(s.UID)))
	}
	policies := p.cs.NetworkingV1().NetworkPolicies(p.cfg.Namespace)
	if n, err := policies.Get(ctx, policyName(pod.Name), metav1.GetOptions{}); err == nil && ownedBy(n.OwnerReferences, pod) {
		p.deleted(ctx, "network policy", pod, policies.Delete(ctx, n.Name, uidDelete(n.UID)))
	}
}

// deleted logs a failed deletion of a Pod's kind of object.
func (p *Provider) deleted(ctx context.Context, kind string, pod *corev1.Pod, err error) {
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		p.logger.WarnContext(ctx, "deleting a sandbox's "+kind, "pod", pod.Name, "err", err)
	}
}

// uidDelete deletes only the object of uid.
func uidDelete(uid types.UID) metav1.DeleteOptions {
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
}

// Inspect reports the Pod's state: running from when Start lifted its gate
// (scheduling and starting count as running), stopped while gated or once
// it exited. A Pod that is gone or being deleted is not found.
func (p *Provider) Inspect(ctx context.Context, h provider.Handle) (provider.Status, error) {
	st, err := p.decodeHandle(h)
	if err != nil {
		return provider.Status{}, err
	}
	pod, err := p.lookup(ctx, st)
	if err != nil {
		return provider.Status{}, err
	}
	return statusOf(pod), nil
}

// statusOf maps a Pod's phase to a provider.Status.
func statusOf(pod *corev1.Pod) provider.Status {
	var st provider.Status
	if c := sandboxStatus(pod); c != nil {
		if r := c.State.Running; r != nil {
			st.StartedAt = r.StartedAt.Time
		}
		if t := c.State.Terminated; t != nil {
			st.StartedAt = t.StartedAt.Time
			st.ExitCode = int(t.ExitCode)
			st.Error = strings.TrimSpace(t.Reason + " " + t.Message)
		}
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		st.State = provider.StateStopped
		if st.Error == "" {
			st.Error = strings.TrimSpace(pod.Status.Reason + " " + pod.Status.Message)
		}
	case corev1.PodPending:
		st.State = provider.StateRunning
		if len(pod.Spec.SchedulingGates) > 0 {
			st.State = provider.StateStopped
		}
	case corev1.PodUnknown:
		st.State = provider.StateRunning
		st.Error = "the Pod's node does not report its state"
	default:
		st.State = provider.StateRunning
		if st.StartedAt.IsZero() && pod.Status.StartTime != nil {
			st.StartedAt = pod.Status.StartTime.Time
		}
	}
	return st
}

// sandboxStatus is the status of the Pod's sandbox container, nil before
// the kubelet reports it.
func sandboxStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == sandboxName {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}
