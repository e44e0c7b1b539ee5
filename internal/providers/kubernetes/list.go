package kubernetes

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// List returns every Pod this provider made for instance, running or not,
// oldest first, read from the API server (not the informer: after a crash
// the reconciler must see what is there). Pods being deleted are gone.
func (p *Provider) List(ctx context.Context, instance string) ([]provider.Listed, error) {
	if instance == "" {
		return nil, errdefs.InvalidArgument("instance_required", "an installation id (instance) is required")
	}
	if _, err := kubeLabels(map[string]string{provider.LabelInstance: instance}); err != nil {
		return nil, err
	}
	sel := labels.SelectorFromSet(labels.Set{
		provider.LabelManaged:  "true",
		provider.LabelInstance: instance,
		provider.LabelProvider: p.Name(),
	}).String()
	pods, err := p.cs.CoreV1().Pods(p.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, apiErr("list the Pods of", err)
	}
	items := pods.Items
	slices.SortFunc(items, func(a, b corev1.Pod) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	out := make([]provider.Listed, 0, len(items))
	for i := range items {
		pod := &items[i]
		if pod.DeletionTimestamp != nil {
			continue
		}
		st := handleState{V: stateVersion, Pod: pod.Name, UID: pod.UID}
		out = append(out, provider.Listed{
			Handle: provider.Handle{Provider: p.Name(), ID: pod.Name, State: st.encode()},
			Labels: maps.Clone(pod.Labels),
			Status: statusOf(pod),
		})
	}
	return out, nil
}

// Relabel sets labels over the Pod's own (a warm sandbox claimed for a
// runtime then carries its runtime and org). The labels that tie the Pod
// to its sandbox and NetworkPolicy (managed, instance, sandbox, provider)
// cannot change.
func (p *Provider) Relabel(ctx context.Context, h provider.Handle, l map[string]string) error {
	st, err := p.decodeHandle(h)
	if err != nil {
		return err
	}
	kl, err := kubeLabels(l)
	if err != nil {
		return err
	}
	pod, err := p.lookup(ctx, st)
	if err != nil {
		return err
	}
	for _, k := range fixedLabels {
		if v, ok := kl[k]; ok && v != pod.Labels[k] {
			return errdefs.InvalidArgument(CodeInvalidSpec, "label %s of a sandbox cannot change", k)
		}
	}
	// The uid in the patch makes it apply to this very Pod only.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": pod.UID, "labels": kl}})
	if err != nil {
		return err
	}
	_, err = p.cs.CoreV1().Pods(p.cfg.Namespace).Patch(ctx, st.Pod, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return notFound(st.Pod, err)
	}
	return apiErr("relabel the Pod of", err)
}

// RemoveWorkspace deletes a workspace's claim and waits until it is gone
// (bounded by Config.StartTimeout and ctx), so a workspace of the same name
// can be made again at once. A claim that does not exist is not an error;
// one a Pod still mounts (running or not) is a conflict; one paddock does
// not manage is refused.
func (p *Provider) RemoveWorkspace(ctx context.Context, name string) error {
	if !provider.ValidName(name, 255) || len(name) < 2 {
		return errdefs.InvalidArgument(CodeInvalidSpec, "workspace volume name %q is not valid", name)
	}
	claims := p.cs.CoreV1().PersistentVolumeClaims(p.cfg.Namespace)
	claim := claimName(name)
	pvc, err := claims.Get(ctx, claim, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return apiErr("read the workspace claim of", err)
	case pvc.Labels[provider.LabelManaged] != "true":
		return errdefs.FailedPrecondition(CodeWorkspaceForeign, "claim %q is not a paddock workspace", claim)
	}
	if pvc.DeletionTimestamp == nil {
		if user, err := p.claimUser(ctx, claim); err != nil {
			return err
		} else if user != "" {
			return errdefs.Conflict(CodeWorkspaceInUse, "workspace %q is still used by a sandbox", name).WithCause(fmt.Errorf("claim %s is mounted by pod %s", claim, user))
		}
		err = claims.Delete(ctx, claim, uidDelete(pvc.UID))
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return apiErr("remove the workspace of", err)
		}
	}
	return p.waitClaimGone(ctx, claim, pvc.UID)
}

// claimUser names a Pod (not being deleted) that mounts claim, "" when
// none does.
func (p *Provider) claimUser(ctx context.Context, claim string) (string, error) {
	pods, err := p.cs.CoreV1().Pods(p.cfg.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", apiErr("list the Pods using the workspace of", err)
	}
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp != nil {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
				return pod.Name, nil
			}
		}
	}
	return "", nil
}

// waitClaimGone polls until the claim of uid is gone.
func (p *Provider) waitClaimGone(ctx context.Context, claim string, uid types.UID) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.StartTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		pvc, err := p.cs.CoreV1().PersistentVolumeClaims(p.cfg.Namespace).Get(ctx, claim, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err), err == nil && pvc.UID != uid:
			return nil
		case err != nil && ctx.Err() == nil:
			return apiErr("remove the workspace of", err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return errdefs.Unavailable(CodeWorkspaceRemoving, "the workspace's claim %q is still being removed", claim).WithCause(ctx.Err())
		}
	}
}
