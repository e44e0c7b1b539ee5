package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkReplicaChaos runs TestReplicaChaos's run, checks included, on
// one replica and on three, in one run: it reports the throughput of
// starts of idle runtimes and of execs into running ones, from six
// clients at once through the round-robin proxy, and with three replicas
// the time from the SIGKILL of the lifecycle and settle leases' holder to
// another replica taking each (fleetLeaseTTL is 3s). Medians over the
// iterations; one iteration is a whole run of about a minute.
//
//	go test -run '^$' -bench ReplicaChaos -benchtime 1x ./internal/e2e
func BenchmarkReplicaChaos(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas-%d", n), func(b *testing.B) {
			var runs []chaosFigures
			for b.Loop() {
				runs = append(runs, replicaChaos(b, n))
			}
			median := func(of func(chaosFigures) float64) float64 {
				vs := make([]float64, len(runs))
				for i, r := range runs {
					vs[i] = of(r)
				}
				slices.Sort(vs)
				return vs[len(vs)/2]
			}
			b.ReportMetric(median(func(f chaosFigures) float64 { return f.startsPerSec }), "starts/s")
			b.ReportMetric(median(func(f chaosFigures) float64 { return f.execsPerSec }), "execs/s")
			for _, lease := range []string{leaseLifecycle, leaseSettle} {
				if _, ok := runs[0].failover[lease]; ok {
					ms := median(func(f chaosFigures) float64 { return float64(f.failover[lease]) / float64(time.Millisecond) })
					b.ReportMetric(ms, lease+"-failover-ms")
				}
			}
			b.ReportMetric(0, "ns/op") // the figures above say more
		})
	}
}
