package config

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/paddockhq/paddock/internal/version"
)

// KindKubernetes is the kind of a provider that places sandboxes on a
// Kubernetes cluster.
const KindKubernetes = "kubernetes"

// A kubernetes provider's start_timeout: the default, and the longest. A
// Pod's start must end within paddock's bound on one provider action (2
// minutes, runtime.Defaults.ProvisionTimeout) with time to spare, so that
// the provider says why a Pod did not start (unschedulable, image not
// found) and a failed start is cleaned up, instead of both running out
// together.
const (
	DefaultKubeStartTimeout = 90 * time.Second
	MaxKubeStartTimeout     = 100 * time.Second
)

// KubernetesProvider is a kubernetes provider's settings: the
// `kubernetes:` block of its entry in the providers list. In the
// environment (PADDOCK_PROVIDERS) such a provider is name=kubernetes:NAMESPACE,
// with the in-cluster config and every other setting at its default.
type KubernetesProvider struct {
	// Kubeconfig is a kubeconfig file; "" uses the in-cluster config (the
	// service account of the Pod paddock runs in). Context picks one of
	// its contexts ("" its current one).
	Kubeconfig string `yaml:"kubeconfig"`
	Context    string `yaml:"context"`
	// Namespace holds every object the provider makes; it must exist.
	Namespace string `yaml:"namespace"`
	// RuntimeClass is the Pods' RuntimeClass ("" the cluster's default;
	// gVisor's where the cluster offers it); StorageClass the workspace
	// claims' ("" the cluster's default).
	RuntimeClass string `yaml:"runtime_class"`
	StorageClass string `yaml:"storage_class"`
	// NodeSelector and Tolerations place the Pods.
	NodeSelector map[string]string `yaml:"node_selector"`
	Tolerations  []Toleration      `yaml:"tolerations"`
	// ShimImage holds the static agent at /paddock-shim
	// (scripts/build-images.sh shim); "" is DefaultShimImage.
	ShimImage string `yaml:"shim_image"`
	// ImagePullPolicy of the Pods' containers: Always, IfNotPresent (the
	// default) or Never.
	ImagePullPolicy string `yaml:"image_pull_policy"`
	// NetworkPolicies says the cluster's network plugin enforces
	// NetworkPolicy. Without it (the default) only the open network mode is
	// offered: none and proxy are refused, never silently open.
	NetworkPolicies bool `yaml:"network_policies"`
	// AgentFrom are the addresses (CIDRs or single addresses) paddock's
	// servers reach the Pods from: with NetworkPolicies, a sandbox's agent
	// port admits only them. Empty admits any, and only the agent link's
	// pinned TLS keeps others out.
	AgentFrom []string `yaml:"agent_from"`
	// DenyCIDRs are addresses (CIDRs or single addresses) no sandbox
	// reaches in the open mode, beside the metadata range, agent_from and
	// proxy_address, which are closed anyway: name the API server, the
	// nodes and the cluster's services here.
	DenyCIDRs []string `yaml:"deny_cidrs"`
	// ProxyAddress is IPv4-address:port where the Pods reach the egress proxy
	// (an address of paddock's host that the Pod network routes to); ""
	// offers no proxy mode.
	ProxyAddress string `yaml:"proxy_address"`
	// PodCIDRs are the cluster's Pod networks, which the egress proxy
	// refuses to reach; empty reads them from the nodes (which needs the
	// right to list nodes).
	PodCIDRs []string `yaml:"pod_cidrs"`
	// Overcommit divides a sandbox's CPU and memory limits into what the
	// scheduler reserves for it: 0 or 1 reserves all (Guaranteed QoS), 4 a
	// quarter; at most 100.
	Overcommit int `yaml:"overcommit"`
	// APIQPS and APIBurst bound the provider's requests to the API server
	// (0: 50 a second, bursts of 100).
	APIQPS   float32 `yaml:"api_qps"`
	APIBurst int     `yaml:"api_burst"`
	// StartTimeout bounds a Pod's scheduling, image and agent start (0:
	// DefaultKubeStartTimeout; at most MaxKubeStartTimeout).
	StartTimeout time.Duration `yaml:"start_timeout"`
}

// Toleration is one of a kubernetes provider's Pod tolerations, as
// Kubernetes writes it (operator Equal or Exists; effect NoSchedule,
// PreferNoSchedule or NoExecute, "" for all).
type Toleration struct {
	Key               string `yaml:"key"`
	Operator          string `yaml:"operator"`
	Value             string `yaml:"value"`
	Effect            string `yaml:"effect"`
	TolerationSeconds *int64 `yaml:"toleration_seconds"`
}

// DefaultShimImage is the shim image of this build
// (scripts/build-images.sh shim tags it so).
func DefaultShimImage() string { return "paddock/shim:" + version.Version }

// StartTimeoutOrDefault is StartTimeout, or DefaultKubeStartTimeout when
// unset.
func (k KubernetesProvider) StartTimeoutOrDefault() time.Duration {
	if k.StartTimeout != 0 {
		return k.StartTimeout
	}
	return DefaultKubeStartTimeout
}

// ShimImageOrDefault is ShimImage, or DefaultShimImage when unset.
func (k KubernetesProvider) ShimImageOrDefault() string {
	if k.ShimImage != "" {
		return k.ShimImage
	}
	return DefaultShimImage()
}

// AgentFromPrefixes reads AgentFrom: each entry a CIDR or one address.
func (k KubernetesProvider) AgentFromPrefixes() ([]netip.Prefix, error) {
	return prefixes("agent_from", k.AgentFrom)
}

// DenyPrefixes reads DenyCIDRs: each entry a CIDR or one address.
func (k KubernetesProvider) DenyPrefixes() ([]netip.Prefix, error) {
	return prefixes("deny_cidrs", k.DenyCIDRs)
}

// prefixes reads the setting key's entries, each a CIDR or one address.
func prefixes(key string, list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("%s %q is not a CIDR or an IP address", key, s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// PodCIDRPrefixes reads PodCIDRs, each a CIDR.
func (k KubernetesProvider) PodCIDRPrefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range k.PodCIDRs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("pod_cidrs %q is not a CIDR", s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// ProxyAddrPort reads ProxyAddress; invalid when it is unset.
func (k KubernetesProvider) ProxyAddrPort() (netip.AddrPort, error) {
	if k.ProxyAddress == "" {
		return netip.AddrPort{}, nil
	}
	ap, err := netip.ParseAddrPort(k.ProxyAddress)
	if err != nil || ap.Port() == 0 || !ap.Addr().Is4() || ap.Addr().IsUnspecified() {
		return netip.AddrPort{}, fmt.Errorf("proxy_address %q is not IPv4-address:port (an address the Pods reach, and a port)", k.ProxyAddress)
	}
	return ap, nil
}

// validate checks the block and makes the kubeconfig's path absolute.
// Each error names the setting.
func (k *KubernetesProvider) validate() error {
	if k.Kubeconfig != "" {
		abs, err := filepath.Abs(k.Kubeconfig)
		if err != nil {
			return fmt.Errorf("kubeconfig: %w", err)
		}
		k.Kubeconfig = abs
	}
	if k.Namespace == "" {
		return errors.New("namespace is required (the namespace that holds the sandboxes' Pods; it must exist)")
	}
	if errs := validation.IsDNS1123Label(k.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", k.Namespace, errs[0])
	}
	for key, class := range map[string]string{"runtime_class": k.RuntimeClass, "storage_class": k.StorageClass} {
		if errs := validation.IsDNS1123Subdomain(class); class != "" && len(errs) > 0 {
			return fmt.Errorf("%s %q: %s", key, class, errs[0])
		}
	}
	for key, value := range k.NodeSelector {
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return fmt.Errorf("node_selector key %q: %s", key, errs[0])
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return fmt.Errorf("node_selector %s value %q: %s", key, value, errs[0])
		}
	}
	for i, t := range k.Tolerations {
		if err := t.validate(); err != nil {
			return fmt.Errorf("tolerations[%d]: %w", i, err)
		}
	}
	if strings.ContainsAny(k.ShimImage, " \t\n") {
		return fmt.Errorf("shim_image %q is not an image reference", k.ShimImage)
	}
	switch k.ImagePullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		return fmt.Errorf("image_pull_policy %q is not one of Always, IfNotPresent, Never", k.ImagePullPolicy)
	}
	if _, err := k.AgentFromPrefixes(); err != nil {
		return err
	}
	if _, err := k.ProxyAddrPort(); err != nil {
		return err
	}
	if _, err := k.PodCIDRPrefixes(); err != nil {
		return err
	}
	if _, err := k.DenyPrefixes(); err != nil {
		return err
	}
	switch {
	case k.Overcommit < 0 || k.Overcommit > 100:
		return fmt.Errorf("overcommit %d is not between 0 and 100", k.Overcommit)
	case k.APIQPS < 0 || k.APIBurst < 0:
		return fmt.Errorf("api_qps %v and api_burst %d must not be negative", k.APIQPS, k.APIBurst)
	}
	if k.StartTimeout != 0 && (k.StartTimeout < 5*time.Second || k.StartTimeout > MaxKubeStartTimeout) {
		return fmt.Errorf("start_timeout %s is neither 0 (%s) nor between 5s and %s (a start must end within paddock's 2-minute bound on one provider action)",
			k.StartTimeout, DefaultKubeStartTimeout, MaxKubeStartTimeout)
	}
	return nil
}

// validate checks a toleration as the API server would.
func (t Toleration) validate() error {
	if t.Key != "" {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return fmt.Errorf("key %q: %s", t.Key, errs[0])
		}
	}
	switch t.Operator {
	case "", "Equal":
		if t.Key == "" {
			return errors.New("operator Equal needs a key (an empty key goes with Exists, to tolerate every taint)")
		}
		if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return fmt.Errorf("value %q: %s", t.Value, errs[0])
		}
	case "Exists":
		if t.Value != "" {
			return errors.New("operator Exists takes no value")
		}
	default:
		return fmt.Errorf("operator %q is not Equal or Exists", t.Operator)
	}
	switch t.Effect {
	case "", "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		return fmt.Errorf("effect %q is not one of NoSchedule, PreferNoSchedule, NoExecute", t.Effect)
	}
	if t.TolerationSeconds != nil && t.Effect != "NoExecute" {
		return errors.New("toleration_seconds goes only with effect NoExecute")
	}
	return nil
}
