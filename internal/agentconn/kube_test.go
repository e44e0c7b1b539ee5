package agentconn_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestKubernetesSandbox drives the agent end to end as the Kubernetes
// provider runs it: PID 1 of a Pod's container on the test cluster, with
// every capability dropped, as uid 1000, reached over TCP with pinned TLS
// from this host, as the docker sandboxes are over their sockets.
func TestKubernetesSandbox(t *testing.T) { testSandbox(t, startKubeSandbox(t)) }

// startKubeSandbox creates and starts a sandbox on the test cluster and
// returns it with a client of its agent.
func startKubeSandbox(t *testing.T) *sandbox {
	t.Helper()
	p, k := testenv.KubeProvider(t, nil)
	id := uuid.NewString()
	spec := provider.Spec{
		SandboxID: id, RuntimeID: id, Image: testenv.TestImage, Workspace: "ws-" + id,
		Resources: provider.Resources{CPUMillis: 500, MemoryMB: 256},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h, err := p.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := p.Destroy(ctx, h); err != nil {
			t.Errorf("destroy: %v", err)
		}
		if err := p.RemoveWorkspace(ctx, spec.Workspace); err != nil {
			t.Errorf("remove the workspace: %v", err)
		}
	})
	if err := p.Start(ctx, h); err != nil {
		t.Fatal(err)
	}
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) { return p.DialAgent(ctx, h) })
	t.Cleanup(func() { c.Close() })
	stop := func(t *testing.T) {
		code, err := exitOnDestroy(t, k, p, h)
		if err != nil || code != 0 {
			t.Fatalf("the agent's exit code %d, %v; want 0", code, err)
		}
	}
	return &sandbox{id: h.ID, client: c, uid: "1000", home: provider.UserHome, stop: stop}
}

// exitOnDestroy destroys h's Pod and returns the exit code its sandbox
// container reported on the way (the kubelet writes it before the Pod
// goes).
func exitOnDestroy(t *testing.T, k *testenv.KubeCluster, p provider.Provider, h provider.Handle) (int32, error) {
	ctx := ctxT(t)
	w, err := k.Client.CoreV1().Pods(k.Namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + h.ID})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	destroyed := make(chan error, 1)
	go func() { destroyed <- p.Destroy(ctx, h) }()
	code, seen := int32(0), false
	for ev := range w.ResultChan() {
		if pod, ok := ev.Object.(*corev1.Pod); ok {
			for _, cs := range pod.Status.ContainerStatuses {
				if cs.Name == "sandbox" && cs.State.Terminated != nil {
					code, seen = cs.State.Terminated.ExitCode, true
				}
			}
		}
		if ev.Type == watch.Deleted {
			break
		}
	}
	if err := <-destroyed; err != nil {
		return 0, err
	}
	if !seen {
		t.Fatal("the Pod went without its container's exit status")
	}
	return code, nil
}
