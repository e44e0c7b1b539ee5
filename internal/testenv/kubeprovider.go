package testenv

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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

// KubeCordon marks node of k unschedulable until t ends, holding a
// machine-wide lock meanwhile: tests in other packages that cordon a node
// of the shared cluster wait their turn, so the cluster never has every
// node cordoned at once.
func KubeCordon(t testing.TB, k *KubeCluster, node string) {
	t.Helper()
	lock, err := os.OpenFile("/var/lock/paddock-kube-cordon.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		_ = lock.Close()
		t.Fatal(err)
	}
	set := func(ctx context.Context, v bool) error {
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": v}})
		_, err := k.Client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	t.Cleanup(func() {
		defer lock.Close() // and the lock with it
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := set(ctx, false); err != nil {
			t.Errorf("uncordoning %s: %v", node, err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := set(ctx, true); err != nil {
		t.Fatalf("cordoning %s: %v", node, err)
	}
}
