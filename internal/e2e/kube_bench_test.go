package e2e

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// echo runs `echo hello` in runtime rid through the API and checks
// its answer.
func (e *kubeBench) echo(ctx context.Context, rid string) error {
	res, err := e.sdk.Exec(ctx, "acme", "dev", rid, pc.ExecRequest{Argv: []string{"echo", "hello"}})
	if err == nil && (res.Exit == nil || res.Exit.Code != 0 || string(res.Stdout) != "hello\n") {
		err = fmt.Errorf("echo: exit %+v, stdout %q", res.Exit, res.Stdout)
	}
	return err
}

// BenchmarkKubeLifecycle measures, on the kubernetes provider, the time
// from nothing to a first command: create a project, start its runtime,
// run `echo` in it — cold (a new Pod and claim) and from a warm pool
// kept running (a label change and an agent dial) — against `kubectl run`
// of the same image on the same cluster, timed to its output. Each
// reports its median and p99, and its ratio to kubectl run. Filling the
// pool and deleting projects stay out of the timings.
//
//	go test -run '^$' -bench KubeLifecycle -benchtime 10x ./internal/e2e
func BenchmarkKubeLifecycle(b *testing.B) {
	warmCfg := pc.RuntimeConfig{CPUMillis: 100, MemoryMB: 128}
	e := newKubeBench(b, []runtime.WarmPool{{CPUMillis: warmCfg.CPUMillis, MemoryMB: warmCfg.MemoryMB, Size: 1, Running: true}})
	ctx := context.Background()
	n := 0
	createStartExec := func(warm bool) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			cfg := pc.RuntimeConfig{CPUMillis: 100, MemoryMB: 192} // never the pool's template
			pooled := map[string]bool{}
			if warm {
				cfg = warmCfg
				var err error
				if pooled, err = filledWarmPools(ctx, e.env); err != nil {
					return 0, err
				}
			}
			n++
			name := fmt.Sprintf("bench-%d", n)
			t0 := time.Now()
			p, err := e.sdk.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: name, Runtime: &cfg})
			if err != nil {
				return 0, err
			}
			rt, err := e.sdk.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{})
			if err == nil {
				err = e.echo(ctx, p.RuntimeID)
			}
			d := time.Since(t0)
			if err != nil {
				return d, err
			}
			if warm != pooled[rt.CurrentSandboxID] {
				return d, fmt.Errorf("warm=%v but claimed a pooled sandbox: %v", warm, pooled[rt.CurrentSandboxID])
			}
			return d, e.sdk.DeleteProject(ctx, "acme", "dev", name)
		}
	}
	var baseline float64
	b.Run("kubectl-run", func(b *testing.B) {
		i := 0
		baseline = testenv.BenchTimed(b, func() (time.Duration, error) {
			i++
			return e.kubectlRun(fmt.Sprintf("kubectl-run-%d", i), testenv.TestImage)
		})
	})
	for _, tc := range []struct {
		name string
		warm bool
	}{{"cold-create-start-exec", false}, {"warm-running-create-start-exec", true}} {
		b.Run(tc.name, func(b *testing.B) {
			if m := testenv.BenchTimed(b, createStartExec(tc.warm)); baseline > 0 {
				b.ReportMetric(m/baseline, "x-kubectl-run")
			}
		})
	}
}

// BenchmarkKubeExec measures an exec round trip (`echo hello`, collected)
// through the API on a running kubernetes runtime (SDK → HTTP → server →
// TLS agent link to the Pod → back), against `kubectl exec` into the same
// Pod (kubectl → API server → kubelet → containerd). Each reports its
// median and p99; kubectl exec also its ratio to the API's.
//
//	go test -run '^$' -bench KubeExec -benchtime 20x ./internal/e2e
func BenchmarkKubeExec(b *testing.B) {
	e := newKubeBench(b, nil)
	ctx := context.Background()
	p, err := e.sdk.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "exec", Runtime: &pc.RuntimeConfig{CPUMillis: 200, MemoryMB: 128}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.sdk.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
		b.Fatal(err)
	}
	pods, err := e.k.Client.CoreV1().Pods(e.k.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 {
		b.Fatalf("the runtime's Pod: %d Pods, %v", len(pods.Items), err)
	}
	pod := pods.Items[0].Name
	var apiMedian float64
	b.Run("api", func(b *testing.B) {
		apiMedian = testenv.BenchLatency(b, func() error { return e.echo(ctx, p.RuntimeID) })
	})
	b.Run("kubectl-exec", func(b *testing.B) {
		m := testenv.BenchLatency(b, func() error {
			out, err := exec.Command(e.kubectl, e.kubectlArgs("exec", pod, "-c", "sandbox", "--", "echo", "hello")...).CombinedOutput()
			if err == nil && string(out) != "hello\n" {
				err = fmt.Errorf("output %q", out)
			}
			if err != nil {
				return fmt.Errorf("kubectl exec: %w: %s", err, out)
			}
			return nil
		})
		if apiMedian > 0 {
			b.ReportMetric(m/apiMedian, "x-api")
		}
	})
}

// BenchmarkKubeFleet starts PADDOCK_BENCH_KUBE_FLEET runtimes (200 unless
// set) across the cluster's nodes through the API, eight at a time, and
// reports: the whole time, each start's median and p99 (create project
// and start; as a ratio to a start with nothing else going on, measured
// first in the same run), the failures, how the Pods spread over the
// nodes, the in-process server's heap and RSS before and after, and the
// RSS of the cluster's control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler) and of the nodes' daemons.
// Then it deletes them all and checks that no Pod and no claim is left.
// The provider reserves a tenth of each runtime's limits (overcommit 10).
// It fails at once if the runtimes' requests cannot fit the nodes.
//
//	PADDOCK_BENCH_KUBE_FLEET=200 go test -run '^$' -bench KubeFleet -benchtime 1x -timeout 60m ./internal/e2e
func BenchmarkKubeFleet(b *testing.B) {
	e := newKubeBenchOvercommit(b, nil, fleetOvercommit)
	n := fleetSize(b)
	e.fleetFits(b, n)
	ctx := context.Background()
	alone := e.startFleetAlone(b)
	round := 0
	for b.Loop() {
		round++
		prefix := fmt.Sprintf("fleet%d", round)
		before, err := takeMem()
		if err != nil {
			b.Fatal(err)
		}
		res := e.startFleet(ctx, prefix, n)
		by, err := e.podsByNode(ctx)
		if err != nil {
			b.Fatal(err)
		}
		after, err := takeMem()
		if err != nil {
			b.Fatal(err)
		}
		del, derr := e.deleteFleet(ctx, prefix, n)
		pods, claims := e.leftOver(ctx)
		reportFleet(b, res, alone, by, before, after)
		b.ReportMetric(del.Seconds(), "delete-s")
		b.ReportMetric(float64(pods), "left-pods")
		b.ReportMetric(float64(claims), "left-claims")
		if res.firstErr != nil {
			b.Logf("first of %d failures: %v", res.failures, res.firstErr)
		}
		if derr != nil || pods+claims > 0 {
			b.Errorf("after deleting the fleet: %v; %d Pods and %d claims left", derr, pods, claims)
		}
	}
	b.ReportMetric(0, "ns/op")
}

// startFleetAlone is the baseline of BenchmarkKubeFleet: the median of
// three runtimes created and started one at a time, then deleted.
func (e *kubeBench) startFleetAlone(b *testing.B) time.Duration {
	b.Helper()
	ctx := context.Background()
	var ds []time.Duration
	for i := range 3 {
		t0 := time.Now()
		if _, err := e.startOne(ctx, fmt.Sprintf("alone-%d", i)); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	if _, err := e.deleteFleet(ctx, "alone", 3); err != nil {
		b.Fatal(err)
	}
	slices.Sort(ds)
	return ds[1]
}

// reportFleet reports one fleet's figures.
func reportFleet(b *testing.B, res fleetResult, alone time.Duration, by map[string]int, before, after memSnapshot) {
	b.ReportMetric(res.total.Seconds(), "total-s")
	b.ReportMetric(float64(res.failures), "failures")
	if len(res.each) > 0 {
		q := func(p float64) time.Duration { return res.each[min(int(p*float64(len(res.each))), len(res.each)-1)] }
		b.ReportMetric(float64(q(0.5).Microseconds()), "median-µs")
		b.ReportMetric(float64(q(0.99).Microseconds()), "p99-µs")
		b.ReportMetric(float64(q(0.5))/float64(alone), "x-alone")
	}
	b.ReportMetric(float64(alone.Microseconds()), "alone-µs")
	for _, node := range slices.Sorted(maps.Keys(by)) {
		b.ReportMetric(float64(by[node]), "pods-"+node)
	}
	b.ReportMetric(before.heap, "heap-before-MiB")
	b.ReportMetric(after.heap, "heap-after-MiB")
	b.ReportMetric(before.rss, "rss-before-MiB")
	b.ReportMetric(after.rss, "rss-after-MiB")
	for _, p := range kubeControlPlane {
		b.ReportMetric(before.procs[p], p+"-before-MiB")
		b.ReportMetric(after.procs[p], p+"-after-MiB")
	}
	b.ReportMetric(before.nodeRSS(), "node-daemons-before-MiB")
	b.ReportMetric(after.nodeRSS(), "node-daemons-after-MiB")
}
