package kubernetes_test

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/provider/providertest"
	"github.com/paddockhq/paddock/internal/providers/kubernetes"
)

// TestNew: a namespace that does not exist and a cluster that does not
// answer are told apart, each with its code.
func TestNew(t *testing.T) {
	k := kubeCluster(t)
	cfg := kubernetes.Config{Kubeconfig: k.Kubeconfig, Namespace: "pdk-no-such-namespace", ShimImage: k.ShimImage}
	_, err := kubernetes.New(t.Context(), cfg, slog.New(slog.DiscardHandler))
	wantCode(t, "missing namespace", err, errdefs.ErrFailedPrecondition, kubernetes.CodeNamespaceNotFound)

	// The same credentials, at a loopback port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	kc, err := clientcmd.LoadFromFile(k.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range kc.Clusters {
		c.Server = "https://" + dead
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	cfg = kubernetes.Config{Kubeconfig: path, Namespace: k.Namespace, ShimImage: k.ShimImage}
	_, err = kubernetes.New(t.Context(), cfg, nil)
	wantCode(t, "dead cluster", err, errdefs.ErrUnavailable, kubernetes.CodeClusterUnavailable)

	p := startProvider(t, kubernetes.Config{Kubeconfig: k.Kubeconfig, Namespace: k.Namespace, ShimImage: k.ShimImage})
	if err := p.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if p.Name() != kubernetes.Name {
		t.Fatalf("Name = %q", p.Name())
	}

	_, err = kubernetes.New(t.Context(), kubernetes.Config{Kubeconfig: k.Kubeconfig, Namespace: k.Namespace}, nil)
	wantCode(t, "no shim image", err, errdefs.ErrInvalidArgument, kubernetes.CodeInvalidConfig)
	if _, err := os.Stat(k.Kubeconfig); err != nil {
		t.Fatal(err)
	}
}

// TestCreateRefusals: a second sandbox of the same id, and a workspace
// whose claim is not paddock's, are refused and leave the first sandbox
// and the foreign claim as they were.
func TestCreateRefusals(t *testing.T) {
	e := newEnv(t, nil)
	spec := e.spec()
	h := e.created(t, spec)
	dup := e.spec()
	dup.SandboxID = spec.SandboxID
	_, err := e.p.Create(e.ctx(t), dup)
	wantCode(t, "same sandbox id", err, errdefs.ErrConflict, kubernetes.CodeSandboxExists)
	if st, err := e.p.Inspect(e.ctx(t), h); err != nil || st.State != provider.StateStopped {
		t.Fatalf("the first sandbox after a refused duplicate: %+v, %v", st, err)
	}
	if !e.exists(t, "secret", h.ID+"-agent") || !e.exists(t, "networkpolicy", h.ID+"-net") {
		t.Fatal("a refused duplicate took the first sandbox's Secret or NetworkPolicy")
	}

	foreign := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "foreign-ws"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("16Mi")}},
		},
	}
	if _, err := e.k.Client.CoreV1().PersistentVolumeClaims(e.k.Namespace).Create(e.ctx(t), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	other := e.spec()
	other.Workspace = "foreign-ws"
	_, err = e.p.Create(e.ctx(t), other)
	wantCode(t, "foreign claim", err, errdefs.ErrFailedPrecondition, kubernetes.CodeWorkspaceForeign)
	wantCode(t, "removing a foreign claim", e.p.RemoveWorkspace(e.ctx(t), "foreign-ws"), errdefs.ErrFailedPrecondition, kubernetes.CodeWorkspaceForeign)
	if !e.exists(t, "pvc", "foreign-ws") || e.exists(t, "pod", "pdk-"+other.SandboxID) {
		t.Fatal("a refused create touched the foreign claim or left a Pod")
	}
}

// TestAgentLinkChecks: a handle carrying another key is refused as
// agent_unverified (the agent's TLS is pinned to its own key); the
// agent's log is readable; the Pod's address is what the egress proxy
// binds credentials to, and the Pod networks are what it refuses.
func TestAgentLinkChecks(t *testing.T) {
	e := newEnv(t, nil)
	h := e.started(t, e.spec())
	wrong, err := agentauth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	forged := h
	forged.State = []byte(`{"v":1,"pod":"` + h.ID + `","key":"` + agentauth.EncodeKey(wrong) + `"}`)
	_, err = e.p.DialAgent(e.ctx(t), forged)
	wantCode(t, "DialAgent with another key", err, errdefs.ErrUnavailable, kubernetes.CodeAgentUnverified)

	// Another replica (a provider of its own, with the handle the store
	// keeps) reaches the same agent.
	other := startProvider(t, e.cfg)
	conn, err := other.DialAgent(e.ctx(t), h)
	if err != nil {
		t.Fatalf("DialAgent from another replica: %v", err)
	}
	if err := providertest.CheckAgent(e.ctx(t), conn); err != nil {
		t.Fatalf("the agent through another replica: %v", err)
	}

	log, err := e.p.AgentLog(e.ctx(t), h, 50)
	if err != nil || strings.TrimSpace(log) == "" {
		t.Fatalf("AgentLog = %q, %v", log, err)
	}
	addrs, err := e.p.SandboxAddrs(e.ctx(t), h)
	if ip := e.pod(t, h).Status.PodIP; err != nil || len(addrs) != 1 || addrs[0].String() != ip {
		t.Fatalf("SandboxAddrs = %v, %v; the Pod's IP is %s", addrs, err, ip)
	}
	subnets, err := e.p.NetworkSubnets(e.ctx(t))
	if err != nil || !slices.Equal(subnets, e.k.PodCIDRs) {
		t.Fatalf("NetworkSubnets = %v, %v, want %v", subnets, err, e.k.PodCIDRs)
	}
	if a, err := e.p.SetupNetworks(e.ctx(t)); err != nil || a != e.cfg.ProxyAddr {
		t.Fatalf("SetupNetworks = %v, %v, want %v", a, err, e.cfg.ProxyAddr)
	}
	noProxy := startProvider(t, withConfig(e.cfg, func(c *kubernetes.Config) { c.ProxyAddr = netip.AddrPort{} }))
	if a, err := noProxy.SetupNetworks(e.ctx(t)); err != nil || a.IsValid() {
		t.Fatalf("SetupNetworks without a proxy address = %v, %v", a, err)
	}
}

func withConfig(c kubernetes.Config, mutate func(*kubernetes.Config)) kubernetes.Config {
	mutate(&c)
	return c
}

// wantCode fails unless err is of kind kind with public code code.
func wantCode(t *testing.T, what string, err, kind error, code string) {
	t.Helper()
	pub, ok := errdefs.Public(err)
	if !errors.Is(err, kind) || !ok || pub.Code != code {
		t.Fatalf("%s: %v, want kind %v code %s", what, err, kind, code)
	}
}
