package testenv

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchFileSize is the size of the file the file benchmarks move: 64 MiB,
// or PADDOCK_BENCH_FILE_MB mebibytes.
func BenchFileSize(b *testing.B) int64 {
	return FileSize(b, "PADDOCK_BENCH_FILE_MB", 64<<20)
}

// FileSize is the size in bytes that the environment variable env gives
// in mebibytes, or def when it is unset; anything but a positive number
// fails tb.
func FileSize(tb testing.TB, env string, def int64) int64 {
	tb.Helper()
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	mb, err := strconv.Atoi(v)
	if err != nil || mb <= 0 {
		tb.Fatalf("%s=%q: want a positive number of mebibytes", env, v)
	}
	return int64(mb) << 20
}

// BenchThroughput times op, which moves size bytes, once per iteration of
// b and reports the throughput of the median transfer and of the 99th
// percentile's (the slow tail), in MB/s, in place of the mean. It returns
// the median transfer's time. Each sample starts with reset, if not nil (an
// upload's removes the file the sample before wrote), and then with the
// host's dirty pages written out.
func BenchThroughput(b *testing.B, size int64, reset, op func() error) (median time.Duration) {
	var samples []time.Duration
	for b.Loop() {
		// Untimed: nothing the sample before left dirty is written back
		// during this one (a run of uploads otherwise pays for the one
		// before it, and the way measured after another for both).
		b.StopTimer()
		if reset != nil {
			if err := reset(); err != nil {
				b.Fatal(err)
			}
		}
		syscall.Sync()
		b.StartTimer()
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(start))
	}
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	q := func(p float64) time.Duration {
		return samples[min(int(p*float64(len(samples))), len(samples)-1)]
	}
	mbps := func(d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }
	median = q(0.5)
	b.ReportMetric(mbps(median), "median-MB/s")
	b.ReportMetric(mbps(q(0.99)), "p99-MB/s")
	b.ReportMetric(0, "ns/op") // the quantiles say more than the mean
	return median
}

// WritePatternFile writes size bytes of PatternReader to a new file in dir
// and returns its path.
func WritePatternFile(b *testing.B, dir string, size int64) string {
	f, err := os.CreateTemp(dir, "pattern-*.bin")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, PatternReader(size)); err != nil {
		b.Fatal(err)
	}
	return f.Name()
}

// HostCat runs cat on this host with stdin from in ("" for none) and
// stdout to out (/dev/null for ""), args as cat's: the floor of a file
// copy.
func HostCat(in, out string, args ...string) error {
	return runRedirected(exec.Command("cat", args...), in, out)
}

// DockerExecCat runs `docker exec -i -u user container sh -c 'cat > path'`
// fed in (upload), or `docker exec -u user container cat path` into
// /dev/null (download, in == ""): the engine's own way to move a file.
func DockerExecCat(container, user, in, path string) error {
	if in != "" {
		return runRedirected(exec.Command("docker", "exec", "-i", "-u", user, container, "sh", "-c", `cat > "$0"`, path), in, "")
	}
	return runRedirected(exec.Command("docker", "exec", "-u", user, container, "cat", path), "", "")
}

func runRedirected(cmd *exec.Cmd, in, out string) error {
	if in != "" {
		f, err := os.Open(in)
		if err != nil {
			return err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	if out == "" {
		out = os.DevNull
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd.Stdout = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", cmd.Args, err, stderr.Bytes())
	}
	return nil
}
