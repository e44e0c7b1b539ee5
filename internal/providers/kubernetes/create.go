package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// cleanupTimeout bounds the undo of a failed Create, which runs even when
// the caller's ctx is done.
const cleanupTimeout = 30 * time.Second

// LabelDiskMB is put on a workspace's claim: the size it was made with.
const LabelDiskMB = "dev.paddock.disk-mb"

// Create makes spec's workspace claim (unless it exists), its Pod (gated:
// not scheduled until Start), the Secret holding the agent's key and the
// NetworkPolicy of its network mode, both owned by the Pod so the
// cluster's garbage collector removes them with it. On error it deletes
// what it made (the claim only if it made it).
func (p *Provider) Create(ctx context.Context, spec provider.Spec) (_ provider.Handle, retErr error) {
	labels, err := p.validateSpec(&spec)
	if err != nil {
		return provider.Handle{}, err
	}
	var undo []func(context.Context)
	defer func() {
		if retErr == nil {
			return
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		for _, u := range slices.Backward(undo) {
			u(cctx)
		}
	}()
	undoClaim, err := p.ensureClaim(ctx, spec)
	if err != nil {
		return provider.Handle{}, err
	}
	undo = append(undo, undoClaim)

	key, err := agentauth.NewKey()
	if err != nil {
		return provider.Handle{}, err
	}
	name := podName(spec.SandboxID)
	pod, err := p.cs.CoreV1().Pods(p.cfg.Namespace).Create(ctx, p.podFor(spec, name, labels), metav1.CreateOptions{})
	if err != nil {
		if apierrors.IsAlreadyExists(err) {
			return provider.Handle{}, errdefs.Conflict(CodeSandboxExists, "a sandbox with id %q already exists", spec.SandboxID).WithCause(err)
		}
		return provider.Handle{}, apiErr("create the Pod of", err)
	}
	undo = append(undo, func(ctx context.Context) {
		if err := p.deletePod(ctx, pod, false); err != nil {
			p.logger.WarnContext(ctx, "deleting a Pod after a failed create", "pod", pod.Name, "err", err)
		}
	})
	owner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}

	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName(name), Labels: labels, OwnerReferences: owner},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{agentauth.KeyFileName: []byte(agentauth.EncodeKey(key) + "\n")},
	}
	if len(spec.TrustedCA) > 0 {
		sec.Data[trustName] = spec.TrustedCA
	}
	if _, err := p.cs.CoreV1().Secrets(p.cfg.Namespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		return provider.Handle{}, apiErr("create the agent key Secret of", err)
	}
	undo = append(undo, func(ctx context.Context) { p.deleteOwned(ctx, pod) })
	np := p.policyFor(spec.Network, name, spec.SandboxID, labels)
	np.OwnerReferences = owner
	if _, err := p.cs.NetworkingV1().NetworkPolicies(p.cfg.Namespace).Create(ctx, np, metav1.CreateOptions{}); err != nil {
		return provider.Handle{}, apiErr("create the NetworkPolicy of", err)
	}
	if err := ctx.Err(); err != nil { // the caller gave up; leave nothing it does not know of
		return provider.Handle{}, fmt.Errorf("create: %w", err)
	}
	p.logger.DebugContext(ctx, "sandbox created", "sandbox", spec.SandboxID, "pod", name)
	st := handleState{V: stateVersion, Pod: name, UID: pod.UID, Key: agentauth.EncodeKey(key)}
	return provider.Handle{Provider: p.Name(), ID: name, State: st.encode()}, nil
}

// validateSpec checks spec (the shared rules, then this provider's) and
// returns the labels of its objects.
func (p *Provider) validateSpec(spec *provider.Spec) (map[string]string, error) {
	if err := provider.Validate(spec, p.cfg.Instance, p.offeredNetworks()); err != nil {
		return nil, err
	}
	switch {
	case spec.User == provider.UserRoot:
		return nil, errdefs.InvalidArgument(CodeUserNotSupported, "the kubernetes provider runs every sandbox as %q (uid %d); %q is not offered", provider.UserDefault, provider.UserUID, provider.UserRoot)
	case spec.WritableRoot:
		return nil, errdefs.FailedPrecondition(CodeWritableRootNotSupported, "the kubernetes provider gives every sandbox a read-only root filesystem")
	}
	return kubeLabels(provider.StandardLabels(*spec, p.Name()))
}

// ensureClaim makes spec's workspace claim unless it exists, and returns
// how to undo that after a failed create: delete the claim it made, or
// nothing. A claim of that name that is not a paddock workspace is never
// used; one being removed is a conflict.
func (p *Provider) ensureClaim(ctx context.Context, spec provider.Spec) (func(context.Context), error) {
	claims := p.cs.CoreV1().PersistentVolumeClaims(p.cfg.Namespace)
	name := claimName(spec.Workspace)
	pvc, err := claims.Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return func(context.Context) {}, checkClaim(spec.Workspace, pvc)
	case !apierrors.IsNotFound(err):
		return nil, apiErr("read the workspace claim of", err)
	}
	owner := spec.RuntimeID
	if owner == "" {
		owner = spec.SandboxID
	}
	labels, err := kubeLabels(map[string]string{
		provider.LabelManaged:   "true",
		provider.LabelInstance:  spec.Instance,
		provider.LabelWorkspace: owner,
		provider.LabelProvider:  p.Name(),
		LabelDiskMB:             strconv.FormatInt(diskMB(spec.Resources.DiskMB), 10),
	})
	if err != nil {
		return nil, err
	}
	pvc = &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: *resource.NewQuantity(diskMB(spec.Resources.DiskMB)<<20, resource.BinarySI),
			}},
		},
	}
	if p.cfg.StorageClass != "" {
		pvc.Spec.StorageClassName = ptr(p.cfg.StorageClass)
	}
	made, err := claims.Create(ctx, pvc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) { // a concurrent Create of the same workspace made it
		return p.ensureClaim(ctx, spec)
	}
	if err != nil {
		return nil, apiErr("create the workspace claim of", err)
	}
	return func(ctx context.Context) {
		err := claims.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &made.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			p.logger.WarnContext(ctx, "deleting a workspace claim after a failed create", "claim", name, "err", err)
		}
	}, nil
}

// checkClaim refuses a claim that is not a paddock workspace, or is being
// removed.
func checkClaim(workspace string, pvc *corev1.PersistentVolumeClaim) error {
	if pvc.Labels[provider.LabelManaged] != "true" {
		return errdefs.FailedPrecondition(CodeWorkspaceForeign, "claim %q of workspace %q exists and is not a paddock workspace", pvc.Name, workspace)
	}
	if pvc.DeletionTimestamp != nil {
		return errdefs.Conflict(CodeWorkspaceRemoving, "workspace %q is being removed", workspace)
	}
	return nil
}

// diskMB is the workspace size for a spec's DiskMB.
func diskMB(mb int64) int64 {
	if mb <= 0 {
		return DefaultDiskMB
	}
	return mb
}
