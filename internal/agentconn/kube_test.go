package agentconn_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	c := newClient(func(ctx context.Context) (net.Conn, error) { return p.DialAgent(ctx, h) })
	t.Cleanup(func() { c.Close() })
	stop := func(t *testing.T) {
		if code := exitOnSIGTERM(t, k, c, h); code != 0 {
			t.Fatalf("the agent's exit code %d; want 0", code)
		}
	}
	return &sandbox{id: h.ID, client: c, uid: "1000", home: provider.UserHome, stop: stop}
}

// exitOnSIGTERM has a process of the sandbox send SIGTERM to the agent,
// PID 1 of its container, as the kubelet does when the Pod is deleted,
// and returns the exit code the container reports. The Pod stays (its
// restart policy is Never), so its status is there to read: a deleted
// Pod's last status is not always written before it goes.
func exitOnSIGTERM(t *testing.T, k *testenv.KubeCluster, c *agentconn.Client, h provider.Handle) int32 {
	ctx := ctxT(t)
	// The call ends with the agent; its answer does not matter.
	_, _ = c.Run(ctx, agentconn.ExecRequest{Argv: []string{"kill", "-TERM", "1"}})
	var code int32
	testenv.Eventually(t, func() error {
		pod, err := k.Client.CoreV1().Pods(k.Namespace).Get(ctx, h.ID, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name == "sandbox" && cs.State.Terminated != nil {
				code = cs.State.Terminated.ExitCode
				return nil
			}
		}
		return fmt.Errorf("the sandbox container has not ended: %+v", pod.Status.ContainerStatuses)
	})
	return code
}
