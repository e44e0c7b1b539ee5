package kubernetes_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestWorkspaceMovesNodes: what a runtime wrote in /workspace survives
// the archive of its sandbox (Destroy: the Pod goes, the claim stays) and
// a wake on another node: the node it ran on is cordoned, the next
// sandbox of the same workspace lands on the other node and finds the
// file.
func TestWorkspaceMovesNodes(t *testing.T) {
	e := newEnv(t, nil)
	if len(e.k.Nodes) < 2 {
		t.Skip("the test cluster has one node")
	}
	spec := e.spec()
	first := e.started(t, spec)
	if out, code := e.run(t, first, "sh", "-c", "echo survived > /workspace/f && cat /home/user/f"); out != "survived" || code != 0 {
		t.Fatalf("writing the workspace: %q %d", out, code)
	}
	node := e.pod(t, first).Spec.NodeName
	if err := e.p.Destroy(e.ctx(t), first); err != nil {
		t.Fatal(err)
	}
	testenv.KubeCordon(t, e.k.KubeCluster, node)

	next := spec
	next.SandboxID = uuid.NewString()
	second := e.started(t, next)
	if got := e.pod(t, second).Spec.NodeName; got == node || got == "" {
		t.Fatalf("the next sandbox runs on %q, want another node than %s", got, node)
	}
	if out, code := e.run(t, second, "cat", "/workspace/f"); out != "survived" || code != 0 {
		t.Fatalf("the file on the other node: %q %d", out, code)
	}
}
