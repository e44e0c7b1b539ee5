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
				b.Logf("run %d: %s", len(runs), runs[len(runs)-1])
			}
			// median is the median of what of returns for the runs that
			// measured it.
			median := func(of func(chaosFigures) (float64, bool)) (float64, bool) {
				var vs []float64
				for _, r := range runs {
					if v, ok := of(r); ok {
						vs = append(vs, v)
					}
				}
				if len(vs) == 0 {
					return 0, false
				}
				slices.Sort(vs)
				return vs[len(vs)/2], true
			}
			report := func(unit string, of func(chaosFigures) (float64, bool)) {
				if v, ok := median(of); ok {
					b.ReportMetric(v, unit)
				}
			}
			report("starts/s", func(f chaosFigures) (float64, bool) { return f.startsPerSec, true })
			report("execs/s", func(f chaosFigures) (float64, bool) { return f.execsPerSec, true })
			for _, lease := range []string{leaseLifecycle, leaseSettle} {
				report(lease+"-failover-ms", func(f chaosFigures) (float64, bool) {
					d, ok := f.failover[lease]
					return float64(d) / float64(time.Millisecond), ok
				})
			}
			b.ReportMetric(0, "ns/op") // the figures above say more
		})
	}
}
