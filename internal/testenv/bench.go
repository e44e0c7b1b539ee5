package testenv

import (
	"fmt"
	"io"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchLatency times op once per iteration of b and reports the median
// and 99th percentile (in microseconds) in place of the mean; it returns
// the median.
func BenchLatency(b *testing.B, op func() error) (median float64) {
	return BenchTimed(b, func() (time.Duration, error) {
		start := time.Now()
		err := op()
		return time.Since(start), err
	})
}

// BenchTimed is BenchLatency for an op that times itself, so that its
// setup and cleanup (creating and deleting a project around a start) stay
// out of the figures.
func BenchTimed(b *testing.B, op func() (time.Duration, error)) (median float64) {
	var samples []time.Duration
	for b.Loop() {
		d, err := op()
		if err != nil {
			b.Fatal(err)
		}
		samples = append(samples, d)
	}
	if len(samples) == 0 {
		return 0
	}
	median = float64(Quantile(samples, 0.5).Microseconds())
	b.ReportMetric(median, "median-µs")
	b.ReportMetric(float64(Quantile(samples, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op") // the quantiles say more than the mean
	return median
}

// Quantile sorts samples and returns the one at p (0.5 the median); it
// needs at least one.
func Quantile(samples []time.Duration, p float64) time.Duration {
	slices.Sort(samples)
	return samples[min(int(p*float64(len(samples))), len(samples)-1)]
}

// DockerExec runs `docker exec container argv...`, the engine's own way
// into a container, for comparison.
func DockerExec(container string, argv ...string) error {
	out, err := exec.Command("docker", append([]string{"exec", container}, argv...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker exec: %w: %s", err, out)
	}
	return nil
}

// BenchFileTransfer runs two sub-benchmarks on one file: "upload" writes
// it with upload, "download" reads it back with download; each reports
// MB/s. The file is 64 MiB, or PADDOCK_BENCH_FILE_MB mebibytes.
func BenchFileTransfer(b *testing.B, upload func(io.Reader) error, download func() (io.ReadCloser, error)) {
	size := BenchFileSize(b)
	b.Run("upload", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if err := upload(PatternReader(size)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("download", func(b *testing.B) {
		// The file is written first (outside the timing): the upload
		// may have been filtered out.
		if err := upload(PatternReader(size)); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		buf := make([]byte, 256<<10)
		for b.Loop() {
			r, err := download()
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.CopyBuffer(io.Discard, r, buf)
			r.Close()
			if err != nil || n != size {
				b.Fatalf("read %d bytes: %v", n, err)
			}
		}
	})
}

// DockerRun runs `docker run --rm image argv...`: the engine's own cold
// start, for comparison.
func DockerRun(image string, argv ...string) error {
	args := append([]string{"run", "--rm", "--network", "none", image}, argv...)
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker run: %w: %s", err, out)
	}
	return nil
}
