package testenv

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/paddockhq/paddock/internal/providers/kubernetes"
)

// KubeProvider returns a Kubernetes provider on the test cluster, in a
// namespace of the test's own, running the freshly built agent from its
// shim image and sandboxes of the test image (never pulled), with every
// network mode (the cluster enforces policies) and the agent port open
// only to the addresses this host dials Pods from; mutate, when not nil,
// changes its config first. It is closed when t ends.
func KubeProvider(t testing.TB, mutate func(*kubernetes.Config)) (*kubernetes.Provider, *KubeCluster) {
	t.Helper()
	k := Kube(t)
	cfg := kubernetes.Config{
		Name:            "kubernetes",
		Instance:        Instance(t),
		Kubeconfig:      k.Kubeconfig,
		Namespace:       k.Namespace,
		RuntimeClass:    k.RuntimeClass,
		StorageClass:    k.StorageClass,
		ShimImage:       KubeShimImage(t),
		ImagePullPolicy: corev1.PullNever,
		NetworkPolicies: true,
		AgentFrom:       KubeAgentFrom(t, k),
		PodCIDRs:        k.PodCIDRs,
		StartTimeout:    90 * time.Second,
	}
	KubeImage(t, TestImage)
	if mutate != nil {
		mutate(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := kubernetes.New(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatalf("kubernetes provider: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, k
}

// KubeAgentFrom are the addresses this host sends from to k's Pod
// networks (one per node here): a control plane on this host dials agents
// from them.
func KubeAgentFrom(t testing.TB, k *KubeCluster) []netip.Prefix {
	t.Helper()
	var out []netip.Prefix
	for _, cidr := range k.PodCIDRs {
		// A UDP "dial" sends nothing: it only asks the kernel for the route.
		c, err := net.Dial("udp", netip.AddrPortFrom(cidr.Addr().Next(), kubernetes.AgentPort).String())
		if err != nil {
			t.Fatalf("routing to the Pod network %s: %v", cidr, err)
		}
		out = append(out, netip.PrefixFrom(c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap(), 32))
		_ = c.Close()
	}
	return out
}
