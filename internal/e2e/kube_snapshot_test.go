package e2e

import (
	"errors"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/provider"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestSnapshotDockerToKubernetes: a Docker runtime's snapshot restores
// into a new project on the Kubernetes provider of the test cluster, and
// its workspace files arrive there; a Kubernetes provider that cannot
// run the snapshot's configuration (no NetworkPolicies, so no network
// policy "none") is 422 snapshot_not_portable naming why, and leaves no
// project.
func TestSnapshotDockerToKubernetes(t *testing.T) {
	e := newKubeEnv(t, 0, kubeProvider{name: "kube", policies: true}, kubeProvider{name: "kube-open"}, kubeProvider{name: "docker", docker: true})
	e.orgAndWorkspace(t)
	ctx := t.Context()
	rid := e.project(t, "on-docker", pc.RuntimeConfig{Provider: "docker", CPUMillis: 100, MemoryMB: 128,
		Network: &pc.NetworkPolicy{Mode: "none"}})
	t.Cleanup(func() { _ = e.c.DeleteProject(ctx, "acme", "dev", "on-docker") })
	if _, err := e.c.StartRuntime(ctx, "acme", "dev", rid, pc.StartRuntimeRequest{}); err != nil {
		t.Fatal(err)
	}
	e.exec(t, rid, "sh", "-c", "mkdir -p /workspace/src && echo from-docker > /workspace/src/a.txt")
	snap, err := e.c.CreateSnapshot(ctx, "acme", "dev", rid, pc.CreateSnapshotRequest{Name: "to-kube"})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Provider != "docker" {
		t.Fatalf("snapshot taken on %q, want docker", snap.Provider)
	}

	res, err := e.c.RestoreSnapshot(ctx, "acme", "dev", snap.ID, pc.RestoreSnapshotRequest{ProjectName: "on-kube", Provider: "kube"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runtime.Config.Provider != "kube" || res.Runtime.Status != pc.RuntimeRunning {
		t.Fatalf("restored runtime %+v", res.Runtime)
	}
	if pods := e.pods(t, provider.LabelRuntime, res.Runtime.ID); len(pods) != 1 {
		t.Fatalf("the restored runtime has %d Pods, want 1", len(pods))
	}
	if got := e.exec(t, res.Runtime.ID, "cat", "/workspace/src/a.txt"); got != "from-docker\n" {
		t.Fatalf("the file on Kubernetes: %q", got)
	}

	_, err = e.c.RestoreSnapshot(ctx, "acme", "dev", snap.ID, pc.RestoreSnapshotRequest{ProjectName: "refused", Provider: "kube-open"})
	var pe *pc.Error
	if !errors.As(err, &pe) || pe.StatusCode != 422 || pe.Code != "snapshot_not_portable" || !strings.Contains(pe.Message, "network") {
		t.Fatalf("a restore onto a provider without network policy none: %v", err)
	}
	if _, err := e.c.GetProject(ctx, "acme", "dev", "refused"); !errors.Is(err, pc.ErrNotFound) {
		t.Fatalf("the refused restore's project: %v", err)
	}
}
