package e2e

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// BenchmarkExecRoundTrip runs `true` in one sandbox through the whole API
// (SDK → HTTP → server → agent → back), collected and streamed, and with
// `docker exec` on the same container; the docker-exec result also reports
// how many times slower it is than the collected API exec (x-api). Its
// floor is the host spawning /bin/true and waiting for it, from Go and
// from a bash loop of 2,000 (bash-loop-µs, the mean); the collected API
// exec reports how many times the floor's median it takes (x-floor).
//
//	go test -run '^$' -bench ExecRoundTrip ./internal/e2e
func BenchmarkExecRoundTrip(b *testing.B) {
	s := defaultSandbox(b)
	ctx := context.Background()
	req := pc.ExecRequest{Argv: []string{"true"}}
	// The floor: this host spawning true and waiting for it, from Go (each
	// spawn timed) and from a bash loop of 2,000 (the mean), in this run.
	var floorMedian, apiMedian float64
	b.Run("floor", func(b *testing.B) {
		floorMedian = testenv.BenchLatency(b, func() error { return exec.Command("/bin/true").Run() })
		start := time.Now()
		if out, err := exec.Command("bash", "-c", "for i in $(seq 2000); do /bin/true; done").CombinedOutput(); err != nil {
			b.Fatalf("the bash loop: %v: %s", err, out)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/2000, "bash-loop-µs")
	})
	b.Run("api", func(b *testing.B) {
		apiMedian = testenv.BenchLatency(b, func() error {
			res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, req)
			if err == nil && (res.Exit == nil || res.Exit.Code != 0) {
				err = fmt.Errorf("exit %+v", res.Exit)
			}
			return err
		})
		if floorMedian > 0 {
			b.ReportMetric(apiMedian/floorMedian, "x-floor")
		}
	})
	b.Run("api-streamed", func(b *testing.B) {
		testenv.BenchLatency(b, func() error {
			st, err := s.sdk.ExecStream(ctx, "acme", "dev", s.rid, req)
			if err != nil {
				return err
			}
			exit, err := st.Wait(nil, nil)
			if err == nil && exit.Code != 0 {
				err = fmt.Errorf("exit %+v", exit)
			}
			return err
		})
	})
	b.Run("docker-exec", func(b *testing.B) {
		median := testenv.BenchLatency(b, func() error { return testenv.DockerExec(s.cid, "true") })
		if apiMedian > 0 {
			b.ReportMetric(median/apiMedian, "x-api")
		}
	})
}

// BenchmarkFileTransfer measures the throughput of one file uploaded to and
// downloaded from a sandbox's workspace through the API. The file is 64
// MiB; PADDOCK_BENCH_FILE_MB sets another size (1024 for the 1 GiB figures
// in docs/BENCHMARKS.md).
func BenchmarkFileTransfer(b *testing.B) {
	s := defaultSandbox(b)
	ctx := context.Background()
	const path = "/workspace/bench.bin"
	testenv.BenchFileTransfer(b,
		func(r io.Reader) error {
			_, err := s.sdk.WriteFile(ctx, "acme", "dev", s.rid, path, r, pc.WriteFileOptions{})
			return err
		},
		func() (io.ReadCloser, error) { return s.sdk.ReadFile(ctx, "acme", "dev", s.rid, path) })
}
