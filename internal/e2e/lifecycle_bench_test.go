package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// BenchmarkLifecycle measures, in one run, how long it takes from nothing
// to a first command: create a project, start its runtime, run `echo` in
// it — cold, and claiming from a warm pool (the running pool's claim also
// in one call, the project created with start) — and from paused to a first
// command (resume, then `echo`); against the engine's own cold start,
// `docker run --rm IMAGE true` on the same image, its start of a created
// container (`docker start`), its unpause (`docker unpause`), and the exec
// round trip of `echo` in a running runtime (the floor of any first
// command), hot and after 300 ms idle. Each reports its median and p99;
// the starts also as ratios to docker run, docker start or unpause, and
// the exec round trip (x-exec), and the median of each provision step and
// of the first exec alone.
// Creating and deleting projects, filling the pool, creating and pausing
// the engine's containers stay out of the timings.
func BenchmarkLifecycle(b *testing.B) {
	testenv.RequireDocker(b, testenv.TestImage)
	ctx := context.Background()
	e := newLifeEnv(b, servertest.Options{WarmPools: []runtime.WarmPool{
		{Size: 1},                               // paused: the default template
		{MemoryMB: 768, Size: 1, Running: true}, // running, agent link open
	}})
	echo := pc.ExecRequest{Argv: []string{"echo", "hello"}}
	firstExec := func(rid string) error {
		res, err := e.sdk.Exec(ctx, "acme", "dev", rid, echo)
		if err == nil && (res.Exit == nil || res.Exit.Code != 0 || string(res.Stdout) != "hello\n") {
			err = fmt.Errorf("echo: exit %+v, stdout %q", res.Exit, res.Stdout)
		}
		return err
	}
	// createStartExec times create project → start → first exec. With
	// warm, the pool is filled first (untimed) and the start must claim
	// from it; cold runtimes ask for other resources than the pool's
	// template, so they never can.
	n := 0
	var steps stepTimes
	createStartExec := func(warm bool, template *pc.RuntimeConfig, oneCall bool) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			ready := map[string]bool{}
			cfg := &pc.RuntimeConfig{MemoryMB: 512}
			if warm {
				cfg = template
				var err error
				if ready, err = filledWarmPools(ctx, e.env); err != nil {
					return 0, err
				}
			}
			n++
			name := fmt.Sprintf("bench-%d", n)
			t0 := time.Now()
			p, err := e.sdk.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: name, Runtime: cfg, Start: oneCall})
			if err == nil && p.StartError != nil {
				err = fmt.Errorf("start: %s", p.StartError.Message)
			}
			if err != nil {
				return 0, err
			}
			if !oneCall {
				_, err = e.sdk.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{})
			}
			t1 := time.Now()
			if err == nil {
				err = firstExec(p.RuntimeID)
			}
			d := time.Since(t0)
			if err != nil {
				return d, err
			}
			steps.add("first-exec", time.Since(t1))
			steps.addProvision(e.env.Runtimes.Provisions(), p.RuntimeID)
			rt, err := e.sdk.GetRuntime(ctx, "acme", "dev", p.RuntimeID)
			if err != nil {
				return d, err
			}
			if warm != ready[rt.CurrentSandboxID] {
				return d, fmt.Errorf("warm=%v but claimed a warm sandbox: %v", warm, ready[rt.CurrentSandboxID])
			}
			return d, e.sdk.DeleteProject(ctx, "acme", "dev", name)
		}
	}

	var baseline, dockerStart, dockerUnpause, execRT float64
	b.Run("docker-run", func(b *testing.B) {
		baseline = testenv.BenchLatency(b, func() error { return testenv.DockerRun(testenv.TestImage, "true") })
	})
	label := provider.LabelInstance + "=" + testenv.Instance(b)
	b.Run("docker-start", func(b *testing.B) {
		dockerStart = testenv.BenchTimed(b, func() (time.Duration, error) {
			id, err := dockerCLI("create", "--network", "none", "--label", label, testenv.TestImage, "true")
			if err != nil {
				return 0, err
			}
			t0 := time.Now()
			_, err = dockerCLI("start", id)
			d := time.Since(t0)
			if _, rerr := dockerCLI("rm", "-f", id); err == nil {
				err = rerr
			}
			return d, err
		})
	})
	b.Run("docker-unpause", func(b *testing.B) {
		id, err := dockerCLI("run", "-d", "--network", "none", "--label", label, testenv.TestImage, "sleep", "3600")
		if err != nil {
			b.Fatal(err)
		}
		defer dockerCLI("rm", "-f", id)
		dockerUnpause = testenv.BenchTimed(b, func() (time.Duration, error) {
			if _, err := dockerCLI("pause", id); err != nil {
				return 0, err
			}
			t0 := time.Now()
			_, err := dockerCLI("unpause", id)
			return time.Since(t0), err
		})
	})
	// running starts a runtime that claims from no pool, until b ends,
	// and returns its id.
	running := func(b *testing.B, name string) string {
		p, err := e.sdk.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: name, Runtime: &pc.RuntimeConfig{MemoryMB: 640}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.sdk.DeleteProject(ctx, "acme", "dev", name) })
		if _, err := e.sdk.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
			b.Fatal(err)
		}
		return p.RuntimeID
	}
	b.Run("exec", func(b *testing.B) {
		// The exec round trip of the same command in a running runtime of
		// the running pool's template: what a first command costs at least.
		rid := running(b, "exec")
		execRT = testenv.BenchLatency(b, func() error { return firstExec(rid) })
	})
	b.Run("exec-after-idle", func(b *testing.B) {
		// The same exec after 300 ms of nothing (untimed): what a claim's
		// first command pays that a hot loop of execs does not, apart from
		// the claim (threads parked and caches gone cold between
		// operations), with this host's own spawn hot and after the same
		// wait beside it.
		rid := running(b, "idle")
		// This host's own spawn of /bin/true, hot (the median of ten in a
		// row) and after the same 300 ms: the floor pays it too.
		spawn := func() (time.Duration, error) {
			t0 := time.Now()
			err := exec.Command("/bin/true").Run()
			return time.Since(t0), err
		}
		var hot, idle []time.Duration
		m := testenv.BenchTimed(b, func() (time.Duration, error) {
			for range 10 {
				d, err := spawn()
				if err != nil {
					return 0, err
				}
				hot = append(hot, d)
			}
			time.Sleep(300 * time.Millisecond)
			d, err := spawn()
			if err != nil {
				return 0, err
			}
			idle = append(idle, d)
			time.Sleep(300 * time.Millisecond)
			t0 := time.Now()
			err = firstExec(rid)
			return time.Since(t0), err
		})
		if execRT > 0 {
			b.ReportMetric(m/execRT, "x-exec")
		}
		if len(idle) > 0 {
			b.ReportMetric(float64(testenv.Quantile(hot, 0.5).Microseconds()), "host-spawn-hot-µs")
			b.ReportMetric(float64(testenv.Quantile(idle, 0.5).Microseconds()), "host-spawn-idle-µs")
		}
	})
	b.Run("pool-memory", func(b *testing.B) {
		// What one pooled sandbox holds, paused and running: its memory
		// cgroup's usage (page cache included) and its processes' RSS.
		if _, err := filledWarmPools(ctx, e.env); err != nil {
			b.Fatal(err)
		}
		ws, err := e.env.Store.ListWarmSandboxes(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() { // nothing timed: the figures are the metrics
		}
		b.ReportMetric(0, "ns/op")
		for _, w := range ws {
			usage, rss, err := cgroupMemory(w.ProviderSandboxID)
			if err != nil {
				b.Fatal(err)
			}
			kind := "paused"
			if w.MemoryMB == 768 {
				kind = "running"
			}
			b.ReportMetric(float64(usage>>10), kind+"-usage-KiB")
			b.ReportMetric(float64(rss>>10), kind+"-rss-KiB")
		}
	})
	// ratios reports m against the baselines of this run.
	ratios := func(b *testing.B, m float64, against ...string) {
		for _, a := range against {
			base := map[string]float64{"x-docker-run": baseline, "x-docker-start": dockerStart, "x-docker-unpause": dockerUnpause, "x-exec": execRT}[a]
			if base > 0 && m > 0 {
				b.ReportMetric(m/base, a)
			}
		}
		steps.report(b)
	}
	b.Run("cold-create-start-exec", func(b *testing.B) {
		steps = stepTimes{}
		ratios(b, testenv.BenchTimed(b, createStartExec(false, nil, false)), "x-docker-run", "x-docker-start", "x-exec")
	})
	b.Run("warm-create-start-exec", func(b *testing.B) {
		steps = stepTimes{}
		ratios(b, testenv.BenchTimed(b, createStartExec(true, nil, false)), "x-docker-run", "x-docker-unpause", "x-exec")
	})
	b.Run("warm-running-create-start-exec", func(b *testing.B) {
		steps = stepTimes{}
		ratios(b, testenv.BenchTimed(b, createStartExec(true, &pc.RuntimeConfig{MemoryMB: 768}, false)), "x-docker-run", "x-exec")
	})
	b.Run("warm-running-create-exec", func(b *testing.B) {
		// The same claim in one call: the project created with start
		// (E2B's create, the SDKs' create_project(start=True)), then the
		// first exec.
		steps = stepTimes{}
		ratios(b, testenv.BenchTimed(b, createStartExec(true, &pc.RuntimeConfig{MemoryMB: 768}, true)), "x-docker-run", "x-exec")
	})
	b.Run("pause-resume-exec", func(b *testing.B) {
		p, err := e.sdk.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "resume", Runtime: &pc.RuntimeConfig{MemoryMB: 512}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.sdk.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
			b.Fatal(err)
		}
		m := testenv.BenchTimed(b, func() (time.Duration, error) {
			if _, err := e.sdk.PauseRuntime(ctx, "acme", "dev", p.RuntimeID); err != nil {
				return 0, err
			}
			t0 := time.Now()
			_, err := e.sdk.ResumeRuntime(ctx, "acme", "dev", p.RuntimeID)
			if err == nil {
				err = firstExec(p.RuntimeID)
			}
			return time.Since(t0), err
		})
		steps = stepTimes{}
		ratios(b, m, "x-docker-unpause", "x-exec")
	})
}

// filledWarmPools fills env's warm pools and returns the ids of the warm
// sandboxes ready, which a warm start must claim one of.
func filledWarmPools(ctx context.Context, env *servertest.Env) (map[string]bool, error) {
	if _, err := env.Runtimes.FillWarmPools(ctx); err != nil {
		return nil, err
	}
	ws, err := env.Store.ListWarmSandboxes(ctx)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, w := range ws {
		ids[w.ID] = true
	}
	return ids, nil
}

// dockerCLI runs the docker CLI, the engine's own client, and returns its
// output trimmed.
func dockerCLI(args ...string) (string, error) {
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", args[0], err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// stepTimes collects, per name, how long each provision step (and the
// first exec) took, to report their medians: where a start's time goes.
type stepTimes map[string][]time.Duration

func (s stepTimes) add(name string, d time.Duration) { s[name] = append(s[name], d) }

// addProvision adds the steps of runtimeID's latest provision.
func (s stepTimes) addProvision(pv []runtime.Provision, runtimeID string) {
	for _, p := range pv {
		if p.RuntimeID == runtimeID {
			for _, st := range p.Steps {
				s.add(st.Name, st.Duration)
			}
			return
		}
	}
}

func (s stepTimes) report(b *testing.B) {
	for name, ds := range s {
		b.ReportMetric(float64(testenv.Quantile(ds, 0.5).Microseconds()), name+"-µs")
	}
}

// cgroupMemory reads a container's memory cgroup (v1 or v2): its usage,
// page cache included, and its processes' RSS (anonymous memory).
func cgroupMemory(containerID string) (usage, rss int64, err error) {
	pid, err := dockerCLI("inspect", "-f", "{{.State.Pid}}", containerID)
	if err != nil {
		return 0, 0, err
	}
	cg, err := os.ReadFile("/proc/" + pid + "/cgroup")
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(cg), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		dir, usageFile, rssKey := "", "", ""
		switch {
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			dir, usageFile, rssKey = "/sys/fs/cgroup/memory"+parts[2], "memory.usage_in_bytes", "total_rss"
		case parts[0] == "0" && parts[1] == "":
			dir, usageFile, rssKey = "/sys/fs/cgroup"+parts[2], "memory.current", "anon"
		default:
			continue
		}
		u, err := os.ReadFile(filepath.Join(dir, usageFile))
		if err != nil {
			return 0, 0, err
		}
		if usage, err = strconv.ParseInt(strings.TrimSpace(string(u)), 10, 64); err != nil {
			return 0, 0, err
		}
		st, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
		if err != nil {
			return 0, 0, err
		}
		for _, l := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(l, rssKey+" "); ok {
				rss, err = strconv.ParseInt(v, 10, 64)
				return usage, rss, err
			}
		}
		return usage, 0, fmt.Errorf("no %s in %s/memory.stat", rssKey, dir)
	}
	return 0, 0, fmt.Errorf("no memory cgroup for pid %s", pid)
}
