package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// BenchmarkRestart measures a restart after a crash that left runtimes
// interrupted: the server is SIGKILLed and its 16 running sandboxes killed
// behind its back, so start-up reconciliation must find each one's compute
// stopped, destroy it and record it. It reports how long until the server
// serves (/health answers) and until reconciliation is done (/readyz),
// reconciling one runtime at a time (as before) and 8 at a time, in one run.
func BenchmarkRestart(b *testing.B) {
	testenv.RequireDocker(b, testenv.TestImage)
	bin := testenv.Binary(b, "paddock")
	shim := testenv.Binary(b, "paddock-shim")
	cli := testenv.DockerClient(b)
	const n = 16
	const key = "pdk_0123456789abcdef0123456789abcdef0123456789ab5eed"
	for _, conc := range []int{1, 8} {
		b.Run(fmt.Sprintf("interrupted-%d/concurrency-%d", n, conc), func(b *testing.B) {
			instance := testenv.Instance(b)
			b.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
			data, runDir := b.TempDir(), testenv.ShortTempDir(b)+"/r"
			env := "PADDOCK_RECONCILE_CONCURRENCY=" + fmt.Sprint(conc)
			s := serveIn(b, bin, shim, data, runDir, instance, key, env)
			c := sdkFor(b, s, key)
			ctx := b.Context()
			if _, err := c.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
				b.Fatal(err)
			}
			if _, err := c.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
				b.Fatal(err)
			}
			ids := make([]string, n)
			for i := range ids {
				p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: fmt.Sprint("p", i), Runtime: &pc.RuntimeConfig{MemoryMB: 64}})
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = p.RuntimeID
			}
			var serving []time.Duration
			testenv.BenchTimed(b, func() (time.Duration, error) {
				for _, id := range ids { // untimed: every runtime running again
					rt, err := c.GetRuntime(ctx, "acme", "dev", id)
					if err == nil && rt.Status != pc.RuntimeIdle && rt.Status != pc.RuntimeRunning {
						rt, err = c.ResetRuntime(ctx, "acme", "dev", id, pc.ResetRequest{})
					}
					if err == nil && rt.Status == pc.RuntimeIdle {
						_, err = c.StartRuntime(ctx, "acme", "dev", id, pc.StartRuntimeRequest{})
					}
					if err != nil {
						return 0, err
					}
				}
				s.kill(b)
				cs, err := cli.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", provider.LabelInstance+"="+instance))})
				if err != nil {
					return 0, err
				}
				for _, ct := range cs {
					if err := cli.ContainerKill(ctx, ct.ID, "KILL"); err != nil {
						return 0, err
					}
				}
				t0 := time.Now()
				s = serveIn(b, bin, shim, data, runDir, instance, key, env) // returns once reconciled
				ready := time.Since(t0)
				serving = append(serving, s.listening.Sub(t0))
				c = sdkFor(b, s, key)
				return ready, nil
			})
			slices.Sort(serving)
			if len(serving) > 0 {
				b.ReportMetric(float64(serving[len(serving)/2].Milliseconds()), "serving-median-ms")
			}
		})
	}
}
