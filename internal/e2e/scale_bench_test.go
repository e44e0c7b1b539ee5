package e2e

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// BenchmarkScale holds many runtimes on one host, a share of them running,
// with workspace disk quotas on (the Docker provider's default: each
// running sandbox's workspace is a loop-mounted ext4 image). The built
// server makes PADDOCK_BENCH_RUNTIMES runtimes (default 100), which stay
// idle (a runtime exists before its first start, and holds no disk until
// then), starts one of them for a baseline, then PADDOCK_BENCH_RUNNING of
// them in all (default 20), 8 at a time. It reports the server's RSS
// (VmRSS of /proc/PID/status) when empty, with the runtimes made, with the
// sandboxes running and after the execs, and its peak (VmHWM); the loop
// devices the workspaces hold; and the exec round trip of `true` through
// the API, with one sandbox running and taken round all the running ones,
// against its floor (the host spawning /bin/true) in the same run.
//
//	PADDOCK_BENCH_RUNTIMES=1000 PADDOCK_BENCH_RUNNING=200 \
//	  go test -run '^$' -bench Scale -benchtime 2000x -timeout 60m ./internal/e2e
func BenchmarkScale(b *testing.B) {
	testenv.RequireDocker(b, testenv.TestImage)
	n, running := benchCounts(b, 100, 20)
	bin := testenv.Binary(b, "paddock")
	shim := testenv.Binary(b, "paddock-shim")
	const key = "pdk_0123456789abcdef0123456789abcdef0123456789ab5ca1"
	instance := testenv.Instance(b)
	b.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	data, runDir := b.TempDir(), testenv.ShortTempDir(b)+"/r"
	s := serveIn(b, bin, shim, data, runDir, instance, key, benchServerEnv...)
	c := sdkFor(b, s, key)
	ctx := b.Context()
	rss := func(what string) float64 {
		b.Helper()
		st := procStatus(b, s.cmd.Process.Pid)
		b.Logf("server RSS %s: %.1f MiB (peak %.1f MiB)", what, st["VmRSS"], st["VmHWM"])
		return st["VmRSS"]
	}
	empty := rss("empty")
	if _, err := c.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	ids := makeRuntimes(b, c, n, 8)
	b.Logf("%d runtimes made in %v", n, time.Since(t0).Round(time.Millisecond))
	idle := rss(fmt.Sprintf("with %d idle runtimes", n))
	if running == 0 {
		return
	}
	// The exec round trip of `true` through the API, taken round the
	// first k runtimes; x-floor is its median over the floor's.
	var floorMedian float64
	execs := func(k int) func(b *testing.B) {
		return func(b *testing.B) {
			var i int
			median := testenv.BenchLatency(b, func() error {
				id := ids[i%k]
				i++
				res, err := c.Exec(ctx, "acme", "dev", id, pc.ExecRequest{Argv: []string{"true"}})
				if err == nil && (res.Exit == nil || res.Exit.Code != 0) {
					err = fmt.Errorf("exit %+v", res.Exit)
				}
				return err
			})
			if floorMedian > 0 {
				b.ReportMetric(median/floorMedian, "x-floor")
			}
		}
	}
	b.Run("floor", func(b *testing.B) {
		floorMedian = testenv.BenchLatency(b, func() error { return exec.Command("/bin/true").Run() })
	})
	// The baseline: one sandbox running among the idle runtimes.
	if err := startRuntimes(ctx, c, ids[:1], 1); err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("exec/runtimes-%d/running-1", n), execs(1))
	t0 = time.Now()
	if err := startRuntimes(ctx, c, ids[1:running], 8); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d more runtimes started in %v", running-1, time.Since(t0).Round(time.Millisecond))
	st := procStatus(b, s.cmd.Process.Pid)
	b.Logf("server RSS with %d of %d running: %.1f MiB (peak %.1f MiB)", running, n, st["VmRSS"], st["VmHWM"])
	loops := len(testenv.LoopsUnder(data + "/disks"))
	b.Logf("loop devices under the server's disks: %d", loops)
	b.Run(fmt.Sprintf("exec/runtimes-%d/running-%d", n, running), func(b *testing.B) {
		execs(running)(b)
		after := procStatus(b, s.cmd.Process.Pid)
		b.ReportMetric(empty, "rss-empty-MiB")
		b.ReportMetric(idle, "rss-idle-MiB")
		b.ReportMetric(st["VmRSS"], "rss-running-MiB")
		b.ReportMetric(after["VmRSS"], "rss-after-exec-MiB")
		b.ReportMetric(after["VmHWM"], "rss-peak-MiB")
		b.ReportMetric(float64(loops), "loop-devices")
	})
	rss("at the end")
}

// benchServerEnv is what a benchmark's built server runs with: rate
// limits a tight loop never empties (their buckets are still taken from).
var benchServerEnv = []string{
	"PADDOCK_RATE_PER_KEY=1e9", "PADDOCK_BURST_PER_KEY=1000000000",
	"PADDOCK_RATE_PER_CLIENT=1e9", "PADDOCK_BURST_PER_CLIENT=1000000000",
}

// benchCounts is how many runtimes a scale benchmark makes and how many
// of them run: PADDOCK_BENCH_RUNTIMES and PADDOCK_BENCH_RUNNING, or the
// defaults given (running is at most the runtimes).
func benchCounts(b *testing.B, runtimes, running int) (int, int) {
	b.Helper()
	get := func(name string, def int) int {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			b.Fatalf("%s=%q", name, v)
		}
		return n
	}
	n := get("PADDOCK_BENCH_RUNTIMES", runtimes)
	return n, min(get("PADDOCK_BENCH_RUNNING", min(running, n)), n)
}

// makeRuntimes makes n projects in acme/dev, par at a time, and returns
// their runtimes' ids (idle: none has started).
func makeRuntimes(b *testing.B, c *pc.Client, n, par int) []string {
	b.Helper()
	ids := make([]string, n)
	err := forEach(n, par, func(i int) error {
		p, err := c.CreateProject(b.Context(), "acme", "dev", pc.CreateProjectRequest{
			Name:    fmt.Sprint("p", i),
			Runtime: &pc.RuntimeConfig{MemoryMB: 64, IdleTimeoutSeconds: 24 * 3600},
		})
		ids[i] = p.RuntimeID
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return ids
}

// startRuntimes has every runtime of ids running, par at a time: one
// that is not idle or running (a reconciliation left it in error) is
// reset first.
func startRuntimes(ctx context.Context, c *pc.Client, ids []string, par int) error {
	return forEach(len(ids), par, func(i int) error {
		id := ids[i]
		rt, err := c.GetRuntime(ctx, "acme", "dev", id)
		if err == nil && rt.Status != pc.RuntimeIdle && rt.Status != pc.RuntimeRunning {
			rt, err = c.ResetRuntime(ctx, "acme", "dev", id, pc.ResetRequest{})
		}
		if err == nil && rt.Status == pc.RuntimeIdle {
			_, err = c.StartRuntime(ctx, "acme", "dev", id, pc.StartRuntimeRequest{})
		}
		if err != nil {
			return fmt.Errorf("runtime %s: %w", id, err)
		}
		return nil
	})
}

// forEach calls f for 0…n-1, par at a time, and returns the first error
// (the calls not yet begun by then are not made).
func forEach(n, par int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		sem   = make(chan struct{}, par)
	)
	for i := range n {
		sem <- struct{}{}
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			<-sem
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := f(i); err != nil {
				mu.Lock()
				first = cmp.Or(first, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// procStatus reads the memory lines of /proc/PID/status (VmRSS, VmHWM, …)
// in MiB.
func procStatus(b *testing.B, pid int) map[string]float64 {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasPrefix(name, "Vm") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err == nil {
			out[name] = kb / 1024
		}
	}
	return out
}
