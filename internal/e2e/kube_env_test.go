package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/paddockhq/paddock/internal/providers/kubernetes"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// kubeBench is an in-process server whose provider is the kubernetes one,
// on the test cluster in a namespace of the benchmark's own.
type kubeBench struct {
	k       *testenv.KubeCluster
	env     *servertest.Env
	sdk     *pc.Client
	kubectl string // the cluster's kubectl binary
}

// newKubeBench starts the server on the test cluster (or skips; fails with
// PADDOCK_REQUIRE_KUBE=1) with the test image and the shim image built
// from this tree imported, and the given warm pools.
func newKubeBench(b *testing.B, pools []runtime.WarmPool) *kubeBench {
	return newKubeBenchOvercommit(b, pools, 1)
}

// newKubeBenchOvercommit is newKubeBench with the provider reserving
// limits/overcommit for each Pod.
func newKubeBenchOvercommit(b *testing.B, pools []runtime.WarmPool, overcommit int) *kubeBench {
	b.Helper()
	k := testenv.Kube(b)
	shim := testenv.KubeShimImage(b)
	testenv.KubeImage(b, testenv.TestImage)
	instance := testenv.Instance(b)
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	p, err := kubernetes.New(ctx, kubernetes.Config{
		Instance:        instance,
		Kubeconfig:      k.Kubeconfig,
		Namespace:       k.Namespace,
		RuntimeClass:    k.RuntimeClass,
		StorageClass:    k.StorageClass,
		ShimImage:       shim,
		ImagePullPolicy: corev1.PullNever,
		NetworkPolicies: true,
		AgentFrom:       testenv.KubeAgentFrom(b, k),
		PodCIDRs:        k.PodCIDRs,
		Overcommit:      overcommit,
		StartTimeout:    3 * time.Minute,
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatalf("kubernetes.New: %v", err)
	}
	b.Cleanup(func() { p.Close() })
	env := servertest.New(b, servertest.Options{
		Provider: p, Instance: instance, Image: testenv.TestImage,
		WarmPools: pools, NoSpecCheck: true,
	})
	env.Must(b, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(b, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	b.Cleanup(tr.CloseIdleConnections)
	sdk, err := pc.New(env.URL, env.Key, pc.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		b.Fatal(err)
	}
	return &kubeBench{k: k, env: env, sdk: sdk, kubectl: kubectlPath(b)}
}

// kubectlPath is the kubectl of the cluster's bin dir
// (PADDOCK_KUBE_BIN of `scripts/kube-cluster.sh env`).
func kubectlPath(b *testing.B) string {
	b.Helper()
	out, err := exec.Command(filepath.Join(testenv.RepoRoot(b), "scripts", "kube-cluster.sh"), "env").Output()
	if err != nil {
		b.Fatalf("kube-cluster.sh env: %v", err)
	}
	for l := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "PADDOCK_KUBE_BIN="); ok {
			return filepath.Join(v, "kubectl")
		}
	}
	b.Fatalf("kube-cluster.sh env has no PADDOCK_KUBE_BIN:\n%s", out)
	return ""
}

// kubectlArgs are the arguments that point kubectl at the cluster and
// the benchmark's namespace, then args.
func (e *kubeBench) kubectlArgs(args ...string) []string {
	return append([]string{"--kubeconfig", e.k.Kubeconfig, "-n", e.k.Namespace}, args...)
}

// kubectlRun runs `kubectl run NAME --image IMG … --rm -i -- echo hello`
// and returns how long until its output was read; the Pod's removal
// (--rm), after the output, is waited for but not timed.
func (e *kubeBench) kubectlRun(name, image string) (time.Duration, error) {
	cmd := exec.Command(e.kubectl, e.kubectlArgs("run", name, "--image", image,
		"--image-pull-policy", "Never", "--restart", "Never", "--rm", "-i",
		"--command", "--", "echo", "hello")...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	r := bufio.NewReader(out)
	line, rerr := r.ReadString('\n')
	d := time.Since(t0)
	_, _ = io.Copy(io.Discard, r)
	if err := cmd.Wait(); err != nil {
		return d, fmt.Errorf("kubectl run: %w: %s", err, stderr.String())
	}
	if rerr != nil || line != "hello\n" {
		return d, fmt.Errorf("kubectl run: output %q, %v: %s", line, rerr, stderr.String())
	}
	return d, nil
}
