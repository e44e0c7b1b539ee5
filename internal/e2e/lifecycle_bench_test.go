package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// BenchmarkLifecycle measures, in one run, how long it takes from nothing
// to a first command: create a project, start its runtime, run `echo` in
// it — cold, and claiming from a warm pool — and from paused to a first
// command (resume, then `echo`); against the engine's own cold start,
// `docker run --rm IMAGE true` on the same image. Each reports its median
// and p99; the cold and warm figures also as a ratio to docker run.
// Creating and deleting projects, filling the pool and pausing stay out of
// the timings.
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
	createStartExec := func(warm bool, template *pc.RuntimeConfig) func() (time.Duration, error) {
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
			p, err := e.sdk.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: name, Runtime: cfg})
			if err != nil {
				return 0, err
			}
			rt, err := e.sdk.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{})
			if err == nil {
				err = firstExec(p.RuntimeID)
			}
			d := time.Since(t0)
			if err != nil {
				return d, err
			}
			if warm != ready[rt.CurrentSandboxID] {
				return d, fmt.Errorf("warm=%v but claimed a warm sandbox: %v", warm, ready[rt.CurrentSandboxID])
			}
			return d, e.sdk.DeleteProject(ctx, "acme", "dev", name)
		}
	}

	var baseline float64
	b.Run("docker-run", func(b *testing.B) {
		baseline = testenv.BenchLatency(b, func() error { return testenv.DockerRun(testenv.TestImage, "true") })
	})
	b.Run("cold-create-start-exec", func(b *testing.B) {
		if m := testenv.BenchTimed(b, createStartExec(false, nil)); baseline > 0 {
			b.ReportMetric(m/baseline, "x-docker-run")
		}
	})
	b.Run("warm-create-start-exec", func(b *testing.B) {
		if m := testenv.BenchTimed(b, createStartExec(true, nil)); baseline > 0 {
			b.ReportMetric(m/baseline, "x-docker-run")
		}
	})
	b.Run("warm-running-create-start-exec", func(b *testing.B) {
		if m := testenv.BenchTimed(b, createStartExec(true, &pc.RuntimeConfig{MemoryMB: 768})); baseline > 0 {
			b.ReportMetric(m/baseline, "x-docker-run")
		}
	})
	b.Run("pause-resume-exec", func(b *testing.B) {
		p, err := e.sdk.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "resume", Runtime: &pc.RuntimeConfig{MemoryMB: 512}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.sdk.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
			b.Fatal(err)
		}
		testenv.BenchTimed(b, func() (time.Duration, error) {
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
