package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// fleetCPUMillis and fleetMemoryMB are each fleet runtime's resources:
// the smallest CPU the API accepts, so that the most fit the nodes.
const (
	fleetCPUMillis = 100
	fleetMemoryMB  = 128
	fleetWorkers   = 8
	// fleetOvercommit: the scheduler reserves a tenth of each fleet
	// runtime's limits, as an operator packing mostly idle sandboxes
	// would (overcommit in the provider's config).
	fleetOvercommit = 10
)

// fleetSize is PADDOCK_BENCH_KUBE_FLEET, 200 unless set.
func fleetSize(b *testing.B) int {
	b.Helper()
	n := 200
	if v := os.Getenv("PADDOCK_BENCH_KUBE_FLEET"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("PADDOCK_BENCH_KUBE_FLEET=%q", v)
		}
	}
	return n
}

// fleetFits fails the benchmark at once when n runtimes' CPU and memory
// requests cannot fit the nodes' allocatable resources less what Pods
// already there request: the rest would wait for the scheduler until
// their start timed out.
func (e *kubeBench) fleetFits(b *testing.B, n int) {
	b.Helper()
	ctx := b.Context()
	nodes, err := e.k.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	pods, err := e.k.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var cpu, mem, slots int64
	for _, nd := range nodes.Items {
		cpu += nd.Status.Allocatable.Cpu().MilliValue()
		mem += nd.Status.Allocatable.Memory().Value() >> 20
		slots += nd.Status.Allocatable.Pods().Value()
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		slots--
		for _, c := range p.Spec.Containers {
			cpu -= c.Resources.Requests.Cpu().MilliValue()
			mem -= c.Resources.Requests.Memory().Value() >> 20
		}
	}
	if need := int64(n); need*fleetCPUMillis/fleetOvercommit > cpu || need*fleetMemoryMB/fleetOvercommit > mem || need > slots {
		b.Fatalf("%d runtimes of %dm CPU and %d MiB do not fit the %d nodes: %dm CPU, %d MiB and %d Pods free "+
			"(set PADDOCK_BENCH_KUBE_FLEET to fewer)", n, fleetCPUMillis, fleetMemoryMB, len(nodes.Items), cpu, mem, slots)
	}
}

// fleetResult is what starting a fleet gave.
type fleetResult struct {
	total    time.Duration
	each     []time.Duration // of the runtimes that started
	failures int
	firstErr error
	rids     []string
}

// startFleet creates n projects and starts their runtimes through the
// API, fleetWorkers at a time, timing each and the whole.
func (e *kubeBench) startFleet(ctx context.Context, prefix string, n int) fleetResult {
	var (
		mu  sync.Mutex
		res fleetResult
		wg  sync.WaitGroup
	)
	jobs := make(chan int)
	t0 := time.Now()
	for range fleetWorkers {
		wg.Go(func() {
			for i := range jobs {
				s := time.Now()
				rid, err := e.startOne(ctx, fmt.Sprintf("%s-%d", prefix, i))
				d := time.Since(s)
				mu.Lock()
				if rid != "" {
					res.rids = append(res.rids, rid)
				}
				if err != nil {
					res.failures++
					if res.firstErr == nil {
						res.firstErr = err
					}
				} else {
					res.each = append(res.each, d)
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	res.total = time.Since(t0)
	slices.Sort(res.each)
	return res
}

// startOne creates project name and starts its runtime; the runtime id
// is returned once the project exists, even when the start failed.
func (e *kubeBench) startOne(ctx context.Context, name string) (string, error) {
	p, err := e.sdk.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: name,
		Runtime: &pc.RuntimeConfig{CPUMillis: fleetCPUMillis, MemoryMB: fleetMemoryMB}})
	if err != nil {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	if _, err := e.sdk.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
		return p.RuntimeID, fmt.Errorf("start %s: %w", name, err)
	}
	return p.RuntimeID, nil
}

// deleteFleet deletes every project whose name has prefix, fleetWorkers
// at a time, and returns the time it took and the first error.
func (e *kubeBench) deleteFleet(ctx context.Context, prefix string, n int) (time.Duration, error) {
	var (
		once     sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	jobs := make(chan int)
	t0 := time.Now()
	for range fleetWorkers {
		wg.Go(func() {
			for i := range jobs {
				if err := e.sdk.DeleteProject(ctx, "acme", "dev", fmt.Sprintf("%s-%d", prefix, i)); err != nil && !pc.IsNotFound(err) {
					once.Do(func() { firstErr = err })
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return time.Since(t0), firstErr
}

// podsByNode counts the namespace's running Pods on each node.
func (e *kubeBench) podsByNode(ctx context.Context) (map[string]int, error) {
	pods, err := e.k.Client.CoreV1().Pods(e.k.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	by := map[string]int{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			by[p.Spec.NodeName]++
		}
	}
	return by, nil
}

// leftOver waits for the namespace to hold no Pod and no claim, and
// returns how many of each are left when it does or its patience ends.
func (e *kubeBench) leftOver(ctx context.Context) (pods, claims int) {
	_ = testenv.Poll(3*time.Minute, func() error {
		pl, err := e.k.Client.CoreV1().Pods(e.k.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		cl, err := e.k.Client.CoreV1().PersistentVolumeClaims(e.k.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		pods, claims = len(pl.Items), len(cl.Items)
		if pods+claims > 0 {
			return fmt.Errorf("%d Pods, %d claims left", pods, claims)
		}
		return nil
	})
	return pods, claims
}
