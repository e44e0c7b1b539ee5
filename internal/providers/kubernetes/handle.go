package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// stateVersion is the version of handleState's encoding.
const stateVersion = 1

// handleState is the recovery state in a provider.Handle (whose ID is the
// Pod's name). Its encoding is versioned; decoders refuse versions they
// do not know.
type handleState struct {
	V int `json:"v"`
	// Pod is the Pod's name (the handle's ID) and UID its uid: a Pod of
	// the same name made later is another sandbox, not this one.
	Pod string    `json:"pod"`
	UID types.UID `json:"uid,omitempty"`
	// Key is the agent's key (hex; see internal/agentauth). A handle
	// without it (one a Lister built) reads it from the Pod's Secret.
	Key string `json:"key,omitempty"`
}

func (s handleState) encode() []byte {
	b, err := json.Marshal(s)
	if err != nil { // a struct of strings always marshals
		panic(err)
	}
	return b
}

// decodeHandle checks h and returns its state. A handle without state is
// accepted (a Pod's name is enough to find it); one naming another
// provider is refused.
func (p *Provider) decodeHandle(h provider.Handle) (handleState, error) {
	if h.Provider != "" && h.Provider != p.Name() {
		return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle belongs to provider %q, not %q", h.Provider, p.Name())
	}
	if h.ID == "" || len(h.ID) > 253 || len(validation.IsDNS1123Subdomain(h.ID)) > 0 {
		return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle's id is not a Pod name")
	}
	if len(h.State) == 0 {
		return handleState{V: stateVersion, Pod: h.ID}, nil
	}
	var st handleState
	if err := json.Unmarshal(h.State, &st); err != nil {
		return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle's state cannot be read").WithCause(err)
	}
	if st.V != stateVersion {
		return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle's state has version %d; this server reads version %d", st.V, stateVersion)
	}
	if st.Pod != "" && st.Pod != h.ID {
		return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle's state names another Pod")
	}
	if st.Key != "" {
		if _, err := agentauth.DecodeKey(st.Key); err != nil {
			return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle's agent key cannot be read").WithCause(err)
		}
	}
	st.Pod = h.ID
	return st, nil
}

// lookup reads the handle's Pod from the API server. A Pod that does not
// exist, is being deleted, is not this provider's, or is another Pod of
// the same name is not found.
func (p *Provider) lookup(ctx context.Context, st handleState) (*corev1.Pod, error) {
	pod, err := p.cs.CoreV1().Pods(p.cfg.Namespace).Get(ctx, st.Pod, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound(st.Pod, err)
		}
		return nil, apiErr("read the Pod of", err)
	}
	return pod, p.check(st, pod)
}

// cached is lookup from the informer's cache, falling back to the API
// server when the cache does not hold the Pod (yet).
func (p *Provider) cached(ctx context.Context, st handleState) (*corev1.Pod, error) {
	pod, err := p.pods.Get(st.Pod)
	if err != nil {
		return p.lookup(ctx, st)
	}
	return pod, p.check(st, pod)
}

// check refuses a Pod that is not the handle's.
func (p *Provider) check(st handleState, pod *corev1.Pod) error {
	switch {
	case !p.owns(pod.Labels):
		return notFound(st.Pod, fmt.Errorf("pod %s is not this provider's", st.Pod))
	case st.UID != "" && pod.UID != st.UID:
		return notFound(st.Pod, fmt.Errorf("pod %s is another Pod (uid %s, not %s)", st.Pod, pod.UID, st.UID))
	case pod.DeletionTimestamp != nil:
		return notFound(st.Pod, fmt.Errorf("pod %s is being deleted", st.Pod))
	}
	return nil
}

// agentKey returns the handle's agent key, from its state or else from
// the Pod's Secret (which must belong to that Pod).
func (p *Provider) agentKey(ctx context.Context, st handleState, pod *corev1.Pod) ([]byte, error) {
	if st.Key != "" {
		return agentauth.DecodeKey(st.Key)
	}
	sec, err := p.cs.CoreV1().Secrets(p.cfg.Namespace).Get(ctx, secretName(pod.Name), metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, errdefs.Unavailable(CodeAgentUnavailable, "the sandbox's agent key is gone").WithCause(err)
		}
		return nil, apiErr("read the agent key of", err)
	}
	if !ownedBy(sec.OwnerReferences, pod) {
		return nil, errdefs.Unavailable(CodeAgentUnavailable, "the sandbox's agent key belongs to another Pod")
	}
	return agentauth.DecodeKey(string(trimNewline(sec.Data[agentauth.KeyFileName])))
}

// ownedBy reports whether refs name pod as owner.
func ownedBy(refs []metav1.OwnerReference, pod *corev1.Pod) bool {
	for _, r := range refs {
		if r.Kind == "Pod" && r.UID == pod.UID {
			return true
		}
	}
	return false
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
