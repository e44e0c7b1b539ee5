package kubernetes_test

import (
	"context"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/paddockhq/paddock/internal/testenv"
)

// cluster is the test cluster (scripts/kube-cluster.sh env), a namespace
// of the test's own, and the images its sandboxes use.
type cluster struct {
	Kubeconfig, Namespace      string
	HostAddr                   netip.Addr
	Nodes                      []string
	StorageClass, RuntimeClass string
	Client                     k8s.Interface
	ShimImage, Image           string
	PodCIDRs                   []netip.Prefix
}

// kubeCluster returns the cluster scripts/kube-cluster.sh env describes
// (PADDOCK_KUBECONFIG and the rest in the environment), with a namespace
// deleted at cleanup; without one the test is skipped (fails with
// PADDOCK_REQUIRE_KUBE=1).
func kubeCluster(t *testing.T) *cluster {
	t.Helper()
	kc := os.Getenv("PADDOCK_KUBECONFIG")
	if kc == "" {
		if os.Getenv("PADDOCK_REQUIRE_KUBE") == "1" {
			t.Fatal("PADDOCK_KUBECONFIG is not set: run scripts/kube-cluster.sh up and export its env")
		}
		t.Skip("no test cluster: run scripts/kube-cluster.sh up and export scripts/kube-cluster.sh env")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := k8s.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ns := "pdk-test-" + randHex(8)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	var cidrs []netip.Prefix
	for _, c := range strings.Split(os.Getenv("PADDOCK_KUBE_POD_CIDRS"), ",") {
		cidrs = append(cidrs, netip.MustParsePrefix(c))
	}
	return &cluster{
		PodCIDRs:   cidrs,
		Kubeconfig: kc, Namespace: ns,
		HostAddr:     netip.MustParseAddr(os.Getenv("PADDOCK_KUBE_HOST_ADDR")),
		Nodes:        strings.Split(os.Getenv("PADDOCK_KUBE_NODES"), ","),
		StorageClass: os.Getenv("PADDOCK_KUBE_STORAGE_CLASS"),
		RuntimeClass: os.Getenv("PADDOCK_KUBE_RUNTIME_CLASS"),
		Client:       cs,
		ShimImage:    os.Getenv("PADDOCK_KUBE_SHIM_IMAGE"),
		Image:        testenv.TestImage,
	}
}
