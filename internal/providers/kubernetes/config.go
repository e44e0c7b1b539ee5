// Package kubernetes is the provider that places sandboxes on a
// Kubernetes cluster: a sandbox is a hardened Pod whose PID 1 is the
// agent, its workspace a PersistentVolumeClaim that outlives the Pod, its
// network mode a NetworkPolicy. The cluster schedules; paddock never
// picks a node. See docs/ARCHITECTURE.md, "The Kubernetes provider".
package kubernetes

import (
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Config configures a Kubernetes provider.
type Config struct {
	// Name is the provider's registry name.
	Name string
	// Instance is the installation id every object carries
	// (provider.LabelInstance).
	Instance string
	// Kubeconfig is the path of a kubeconfig file; "" uses the in-cluster
	// config (the service account of the Pod paddock runs in).
	Kubeconfig string
	// Context is the kubeconfig context; "" its current one.
	Context string
	// Namespace holds every object the provider makes.
	Namespace string
	// RuntimeClass is the Pods' runtimeClassName ("" the cluster's
	// default), e.g. gVisor's where the cluster offers it.
	RuntimeClass string
	// StorageClass is the workspaces' claims' class ("" the cluster's
	// default).
	StorageClass string
	// NodeSelector and Tolerations place the Pods.
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	// ShimImage is an image holding the static agent binary at
	// /paddock-shim (scripts/build-images.sh shim builds it); an init
	// container copies the agent from it into each Pod.
	ShimImage string
	// ImagePullPolicy of every container: Always, IfNotPresent (the
	// default) or Never.
	ImagePullPolicy corev1.PullPolicy
	// NetworkPolicies says the cluster's network plugin enforces
	// NetworkPolicy. Without it only the open mode is offered: none and
	// proxy are refused, never silently open.
	NetworkPolicies bool
	// AgentFrom are the addresses paddock's servers dial agents from: a
	// sandbox's agent port admits only them (with NetworkPolicies). Empty
	// admits any address, and only the pinned TLS of the agent link
	// (internal/agentauth) keeps others out.
	AgentFrom []netip.Prefix
	// DenyCIDRs are addresses no sandbox reaches in the open mode beside
	// those closed anyway (the metadata range, AgentFrom, ProxyAddr): the
	// API server, the nodes, the cluster's services, as the operator names
	// them.
	DenyCIDRs []netip.Prefix
	// ProxyAddr is where the Pods reach the egress proxy (an address of
	// the host paddock runs on, routed from the Pod network); invalid
	// offers no proxy mode.
	ProxyAddr netip.AddrPort
	// PodCIDRs are the cluster's Pod networks, which the egress proxy
	// refuses to reach (NetworkSubnets); empty reads them from the nodes
	// (spec.podCIDRs), which needs the right to list nodes.
	PodCIDRs []netip.Prefix
	// Overcommit divides a sandbox's CPU and memory limits into its
	// requests (what the scheduler reserves): 1 (or 0), the default,
	// reserves all of it (Guaranteed QoS); 4 reserves a quarter, so a node
	// holds four times as many sandboxes that are mostly idle, at the risk
	// of contention and eviction when they are not.
	Overcommit int
	// QPS and Burst bound the provider's requests to the API server (0:
	// DefaultQPS and DefaultBurst; client-go's own 5 and 10 throttle a
	// fleet's starts by seconds).
	QPS   float32
	Burst int
	// StartTimeout bounds a Pod's scheduling, image and agent start; 0
	// means DefaultStartTimeout.
	StartTimeout time.Duration
}

// Name is the provider's registry name unless its Config names it.
const Name = "kubernetes"

// AgentPort is the TCP port the agent listens on in every Pod (TLS, see
// internal/agentauth).
const AgentPort = 7443

// Defaults applied when a Config or a Spec leaves a value at zero.
const (
	DefaultStartTimeout = 2 * time.Minute
	// DefaultQPS and DefaultBurst bound the provider's API requests.
	DefaultQPS   = 50
	DefaultBurst = 100
	// MaxOvercommit is the largest Overcommit.
	MaxOvercommit    = 100
	DefaultMemoryMB  = 1024
	DefaultCPUMillis = 1000
	DefaultTmpMB     = 512
	DefaultDiskMB    = 1024
)

// TmpMemoryDivisor bounds /tmp (a memory-backed emptyDir, counted against
// the Pod's memory limit) to this fraction of the memory limit, as the
// Docker provider does.
const TmpMemoryDivisor = 4

// restConfig loads the client configuration cfg names.
func restConfig(cfg Config) (*rest.Config, error) {
	if cfg.Kubeconfig == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes: no kubeconfig given and not in a cluster: %w", err)
		}
		return rc, nil
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: cfg.Kubeconfig}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: cfg.Context}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes: kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	return rc, nil
}
