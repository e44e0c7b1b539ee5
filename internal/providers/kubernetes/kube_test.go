package kubernetes_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/kubernetes"
	"github.com/paddockhq/paddock/internal/testenv"
)

// env is one test's cluster, namespace, provider and images.
type env struct {
	k     *cluster
	p     *kubernetes.Provider
	cfg   kubernetes.Config
	image string
}

// newEnv starts a provider on the test cluster, in a namespace of the
// test's own, with every network mode (the cluster enforces policies) and
// the agent port open only to the address this host dials Pods from.
func newEnv(t *testing.T, mutate func(*kubernetes.Config)) *env {
	t.Helper()
	return newEnvOn(t, kubeCluster(t), mutate)
}

// newEnvOn is newEnv in k's namespace.
func newEnvOn(t *testing.T, k *cluster, mutate func(*kubernetes.Config)) *env {
	t.Helper()
	cfg := kubernetes.Config{
		Instance:        "pdk" + randHex(6),
		Kubeconfig:      k.Kubeconfig,
		Namespace:       k.Namespace,
		RuntimeClass:    k.RuntimeClass,
		StorageClass:    k.StorageClass,
		ShimImage:       k.ShimImage,
		ImagePullPolicy: corev1.PullNever,
		NetworkPolicies: true,
		AgentFrom:       testenv.KubeAgentFrom(t, k.KubeCluster),
		PodCIDRs:        k.PodCIDRs,
		ProxyAddr:       netip.AddrPortFrom(k.HostAddr, 3128),
		StartTimeout:    90 * time.Second,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	return &env{k: k, p: startProvider(t, cfg), cfg: cfg, image: k.Image}
}

// startProvider makes a provider of cfg, closed at cleanup.
func startProvider(t *testing.T, cfg kubernetes.Config) *kubernetes.Provider {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := kubernetes.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("kubernetes.New: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// spec is a valid spec with a new sandbox id and workspace.
func (e *env) spec() provider.Spec {
	return provider.Spec{
		SandboxID: uuid.NewString(),
		Instance:  e.cfg.Instance,
		Image:     e.image,
		Workspace: "ws-" + uuid.NewString(),
		Network:   provider.NetworkNone,
		Resources: provider.Resources{CPUMillis: 200, MemoryMB: 128, DiskMB: 64},
	}
}

// started creates and starts spec's sandbox, destroyed (and its
// workspace removed) at cleanup.
func (e *env) started(t *testing.T, spec provider.Spec) provider.Handle {
	t.Helper()
	h := e.created(t, spec)
	if err := e.p.Start(e.ctx(t), h); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return h
}

// created creates spec's sandbox, destroyed (and its workspace removed)
// at cleanup.
func (e *env) created(t *testing.T, spec provider.Spec) provider.Handle {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := e.p.RemoveWorkspace(ctx, spec.Workspace); err != nil {
			t.Errorf("cleanup: RemoveWorkspace: %v", err)
		}
	})
	h, err := e.p.Create(e.ctx(t), spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := e.p.Destroy(ctx, h); err != nil {
			t.Errorf("cleanup: Destroy: %v", err)
		}
	})
	return h
}

func (e *env) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// run runs argv in h's sandbox through its agent and returns its output
// and exit code.
func (e *env) run(t *testing.T, h provider.Handle, argv ...string) (string, int) {
	t.Helper()
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) { return e.p.DialAgent(ctx, h) })
	defer c.Close()
	res, err := c.Run(e.ctx(t), agentconn.ExecRequest{Argv: argv})
	if err != nil {
		t.Fatalf("run %q: %v", argv, err)
	}
	return strings.TrimSpace(string(res.Stdout) + string(res.Stderr)), res.Exit.Code
}

// pod reads h's Pod.
func (e *env) pod(t *testing.T, h provider.Handle) *corev1.Pod {
	t.Helper()
	pod, err := e.k.Client.CoreV1().Pods(e.k.Namespace).Get(e.ctx(t), h.ID, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading pod %s: %v", h.ID, err)
	}
	return pod
}

// exists reports whether the namespace holds an object of kind ("pod",
// "secret", "networkpolicy", "pvc") named name (being deleted counts as
// gone).
func (e *env) exists(t *testing.T, kind, name string) bool {
	t.Helper()
	var meta metav1.Object
	var err error
	c, ns, ctx := e.k.Client, e.k.Namespace, e.ctx(t)
	switch kind {
	case "pod":
		meta, err = c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	case "secret":
		meta, err = c.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	case "networkpolicy":
		meta, err = c.NetworkingV1().NetworkPolicies(ns).Get(ctx, name, metav1.GetOptions{})
	case "pvc":
		meta, err = c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	default:
		t.Fatalf("unknown kind %s", kind)
	}
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("reading %s %s: %v", kind, name, err)
	}
	return meta.GetDeletionTimestamp() == nil
}

func randHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
