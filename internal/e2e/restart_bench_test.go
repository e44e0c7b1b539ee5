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
// interrupted: the server is SIGKILLed and its running sandboxes killed
// behind its back, so start-up reconciliation must find each one's compute
// stopped, destroy it and record it. It reports how long until the server
// serves (/health answers) and until reconciliation is done (/readyz),
// reconciling one runtime at a time (as before) and 8 at a time, in one run.
//
// It makes 16 runtimes, all running, or PADDOCK_BENCH_RUNTIMES runtimes of
// which PADDOCK_BENCH_RUNNING run (the others stay idle, as BenchmarkScale
// makes them); workspace disk quotas are on:
//
//	PADDOCK_BENCH_RUNTIMES=1000 PADDOCK_BENCH_RUNNING=200 \
//	  go test -run '^$' -bench 'Restart/.*/concurrency-8' -benchtime 2x -timeout 60m ./internal/e2e
func BenchmarkRestart(b *testing.B) {
	testenv.RequireDocker(b, testenv.TestImage)
	bin := testenv.Binary(b, "paddock")
	shim := testenv.Binary(b, "paddock-shim")
	cli := testenv.DockerClient(b)
	n, running := benchCounts(b, 16, 16)
	const key = "pdk_0123456789abcdef0123456789abcdef0123456789ab5eed"
	name := fmt.Sprintf("interrupted-%d", running)
	if n != running {
		name = fmt.Sprintf("interrupted-%d-of-%d", running, n)
	}
	for _, conc := range []int{1, 8} {
		b.Run(fmt.Sprintf("%s/concurrency-%d", name, conc), func(b *testing.B) {
			instance := testenv.Instance(b)
			b.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
			data, runDir := b.TempDir(), testenv.ShortTempDir(b)+"/r"
			// The restarted server is the replica that died, as one on a
			// fixed address is by default: it takes back the leases it
			// held at once, rather than after they lapse (listening on
			// port 0 would make every start a new replica).
			env := []string{"PADDOCK_RECONCILE_CONCURRENCY=" + fmt.Sprint(conc), "PADDOCK_REPLICA_ID=" + instance}
			env = append(env, benchServerEnv...)
			s := serveIn(b, bin, shim, data, runDir, instance, key, env...)
			c := sdkFor(b, s, key)
			ctx := b.Context()
			if _, err := c.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
				b.Fatal(err)
			}
			if _, err := c.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
				b.Fatal(err)
			}
			ids := makeRuntimes(b, c, n, 8)[:running]
			var serving []time.Duration
			testenv.BenchTimed(b, func() (time.Duration, error) {
				// Untimed: every runtime that runs running again.
				if err := startRuntimes(ctx, c, ids, 8); err != nil {
					return 0, err
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
				s = serveIn(b, bin, shim, data, runDir, instance, key, env...) // returns once reconciled
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
