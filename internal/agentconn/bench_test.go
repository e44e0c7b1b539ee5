package agentconn_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
)

// reportLatency reports the median and 99th percentile of samples.
func reportLatency(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	q := func(p float64) float64 {
		i := min(int(p*float64(len(samples))), len(samples)-1)
		return float64(samples[i].Microseconds())
	}
	b.ReportMetric(q(0.5), "median-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(0, "ns/op") // the quantiles say more than the mean
}

// BenchmarkExecTrue compares running `true` in a sandbox through the agent
// with `docker exec` on the same container.
func BenchmarkExecTrue(b *testing.B) {
	sb := startSandbox(b)
	ctx := context.Background()
	b.Run("agentconn", func(b *testing.B) {
		var samples []time.Duration
		for b.Loop() {
			start := time.Now()
			res, err := sb.client.Run(ctx, agentconn.ExecRequest{Argv: []string{"true"}})
			if err != nil || res.Exit.Code != 0 {
				b.Fatalf("run: %+v %v", res.Exit, err)
			}
			samples = append(samples, time.Since(start))
		}
		reportLatency(b, samples)
	})
	b.Run("docker-exec", func(b *testing.B) {
		var samples []time.Duration
		for b.Loop() {
			start := time.Now()
			if out, err := exec.Command("docker", "exec", sb.id, "true").CombinedOutput(); err != nil {
				b.Fatalf("docker exec: %v: %s", err, out)
			}
			samples = append(samples, time.Since(start))
		}
		reportLatency(b, samples)
	})
}

// BenchmarkFileTransfer measures upload and download throughput of one
// file through the agent of a sandbox (into its tmpfs workspace). The size
// is 64 MiB; set PADDOCK_BENCH_FILE_MB for another.
func BenchmarkFileTransfer(b *testing.B) {
	size := int64(64 << 20)
	if v := os.Getenv("PADDOCK_BENCH_FILE_MB"); v != "" {
		mb, err := strconv.Atoi(v)
		if err != nil || mb <= 0 {
			b.Fatalf("PADDOCK_BENCH_FILE_MB=%q", v)
		}
		size = int64(mb) << 20
	}
	sb := startSandbox(b)
	ctx := context.Background()
	const path = "/workspace/bench.bin"
	b.Run("upload", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if _, err := sb.client.WriteFile(ctx, path, newPatternReader(size), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("download", func(b *testing.B) {
		if _, err := sb.client.Stat(ctx, path); err != nil {
			if _, err := sb.client.WriteFile(ctx, path, newPatternReader(size), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(size)
		for b.Loop() {
			r, err := sb.client.ReadFile(ctx, path)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, r)
			r.Close()
			if err != nil || n != size {
				b.Fatalf("read %d bytes: %v", n, err)
			}
		}
	})
}
