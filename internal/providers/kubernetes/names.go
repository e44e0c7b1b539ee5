package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// podPrefix starts the name of every Pod the provider makes.
const podPrefix = "pdk-"

// podName is the name of a sandbox's Pod, derived from its id. It is
// valid DNS: safeName's.
func podName(sandboxID string) string { return safeName(podPrefix+sandboxID, 200) }

// secretName and policyName name the Secret holding a sandbox's agent key
// and the NetworkPolicy of its network mode: the Pod's name with a suffix.
func secretName(pod string) string { return pod + "-agent" }
func policyName(pod string) string { return pod + "-net" }

// claimName is the name of the PersistentVolumeClaim of the workspace
// named workspace (provider.Spec.Workspace): lower-cased, with what DNS
// does not allow replaced by '-'. A name that had to change gets a hash of
// the original, so two workspaces never share a claim ("A" and "a").
func claimName(workspace string) string { return safeName(workspace, 253) }

// safeName makes s a valid DNS subdomain of at most max bytes (max ≥ 20).
func safeName(s string, max int) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			b[i] = '-'
		}
	}
	out := string(b)
	if out == s && len(out) <= max && len(validation.IsDNS1123Subdomain(out)) == 0 {
		return out
	}
	sum := sha256.Sum256([]byte(s))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	out = strings.Trim(strings.ReplaceAll(out, ".", "-"), "-")
	if len(out) > max-len(suffix) {
		out = strings.TrimRight(out[:max-len(suffix)], "-")
	}
	if out == "" {
		out = "x"
	}
	return out + suffix
}

// kubeLabels maps paddock's labels (provider.StandardLabels and a spec's
// own) to Kubernetes labels. paddock's keys are valid Kubernetes keys
// (dev.paddock.instance has no prefix and is a valid name); a key or value
// Kubernetes refuses (a value is at most 63 characters of letters, digits,
// '.', '_' and '-') is an invalid argument, never dropped.
func kubeLabels(l map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		v := l[k]
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, errdefs.InvalidArgument(provider.CodeInvalidSpec, "label %q cannot be a Kubernetes label: %s", k, errs[0])
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, errdefs.InvalidArgument(provider.CodeInvalidSpec, "label %s=%q cannot be a Kubernetes label: %s", k, v, errs[0])
		}
		out[k] = v
	}
	return out, nil
}

// fixedLabels are the labels that tie a Pod to its sandbox and its
// NetworkPolicy; Relabel cannot change them.
var fixedLabels = []string{provider.LabelManaged, provider.LabelInstance, provider.LabelSandbox, provider.LabelProvider}

// owns reports whether an object carrying labels is paddock's and this
// provider's.
func (p *Provider) owns(l map[string]string) bool {
	return l[provider.LabelManaged] == "true" && l[provider.LabelProvider] == p.Name()
}
