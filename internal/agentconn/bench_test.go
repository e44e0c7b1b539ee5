package agentconn_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/testenv"
)

// BenchmarkExecTrue compares running `true` in a sandbox through the agent
// with `docker exec` on the same container, on runc and under gVisor.
func BenchmarkExecTrue(b *testing.B) {
	for _, rt := range runtimes {
		b.Run(rt.name, func(b *testing.B) {
			sb := startSandbox(b, rt.runtime)
			ctx := context.Background()
			b.Run("agentconn", func(b *testing.B) {
				testenv.BenchLatency(b, func() error { return runTrue(ctx, sb.client) })
			})
			b.Run("docker-exec", func(b *testing.B) {
				testenv.BenchLatency(b, func() error { return testenv.DockerExec(sb.id, "true") })
			})
		})
	}
}

// BenchmarkExecAgainstBase runs `true` through this tree's agent, through
// a base agent binary (PADDOCK_BENCH_BASE_SHIM, e.g. paddock-shim built
// from an earlier commit with CGO_ENABLED=0), each in a sandbox of its own
// on runc, and on the host (the floor), one call of each in turn in the
// same loop, so that the machine's load falls on all three alike.
func BenchmarkExecAgainstBase(b *testing.B) {
	base := os.Getenv("PADDOCK_BENCH_BASE_SHIM")
	if base == "" {
		b.Skip("PADDOCK_BENCH_BASE_SHIM names no base agent binary")
	}
	cur, old := startSandbox(b, ""), startSandboxOf(b, "", base)
	ctx := context.Background()
	run := func(c *agentconn.Client) (time.Duration, error) {
		start := time.Now()
		err := runTrue(ctx, c)
		return time.Since(start), err
	}
	var samples [3][]time.Duration // this tree, base, floor
	for b.Loop() {
		for i, c := range []*agentconn.Client{cur.client, old.client} {
			d, err := run(c)
			if err != nil {
				b.Fatal(err)
			}
			samples[i] = append(samples[i], d)
		}
		start := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		samples[2] = append(samples[2], time.Since(start))
	}
	var med [3]float64
	for i, name := range []string{"agent", "base", "floor"} {
		s := samples[i]
		slices.Sort(s)
		med[i] = float64(s[len(s)/2].Microseconds())
		b.ReportMetric(med[i], name+"-median-µs")
		b.ReportMetric(float64(s[min(len(s)*99/100, len(s)-1)].Microseconds()), name+"-p99-µs")
	}
	b.ReportMetric(med[0]/med[2], "x-floor")
	b.ReportMetric(med[1]/med[2], "base-x-floor")
	b.ReportMetric(med[0]/med[1], "x-base")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkFileTransfer measures upload and download throughput of one
// file through the agent of a sandbox (into its tmpfs workspace); see
// testenv.BenchFileTransfer for the size.
func BenchmarkFileTransfer(b *testing.B) {
	sb := startSandbox(b, "")
	ctx := context.Background()
	const path = "/workspace/bench.bin"
	testenv.BenchFileTransfer(b,
		func(r io.Reader) error {
			_, err := sb.client.WriteFile(ctx, path, r, 0o644)
			return err
		},
		func() (io.ReadCloser, error) { return sb.client.ReadFile(ctx, path) })
}

// BenchmarkAgentLink splits an exec through the agent of a sandbox on
// runc into its link and its spawn, in one run: pipe-floor is a round
// trip of 4 bytes through a host process (cat) and back, the kernel's
// floor of any call to another process; health is a unary call on the
// client's HTTP/2 connection (Connect); refused is a framed exec the
// agent refuses before any spawn (an absolute path that is not there),
// the framed path's round trip with the agent's reading of the request;
// exec runs `true`.
//
//	go test -run '^$' -bench AgentLink -benchtime 2000x ./internal/agentconn
func BenchmarkAgentLink(b *testing.B) {
	sb := startSandbox(b, "")
	ctx := context.Background()
	b.Run("pipe-floor", func(b *testing.B) {
		cat := exec.Command("cat")
		in, err := cat.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := cat.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cat.Start(); err != nil {
			b.Fatal(err)
		}
		defer cat.Wait()
		defer in.Close()
		buf := make([]byte, 4)
		testenv.BenchLatency(b, func() error {
			if _, err := in.Write([]byte("ping")); err != nil {
				return err
			}
			_, err := io.ReadFull(out, buf)
			return err
		})
	})
	b.Run("health", func(b *testing.B) {
		testenv.BenchLatency(b, func() error { return sb.client.Health(ctx) })
	})
	b.Run("refused", func(b *testing.B) {
		testenv.BenchLatency(b, func() error {
			_, err := sb.client.Run(ctx, agentconn.ExecRequest{Argv: []string{"/paddock-no-such-command"}})
			if !errdefs.IsNotFound(err) {
				return fmt.Errorf("a command that is not there: %v, want not found", err)
			}
			return nil
		})
	})
	b.Run("exec", func(b *testing.B) {
		testenv.BenchLatency(b, func() error { return runTrue(ctx, sb.client) })
	})
}

// runTrue runs `true` through c and fails unless it exits 0.
func runTrue(ctx context.Context, c *agentconn.Client) error {
	res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"true"}})
	if err == nil && res.Exit.Code != 0 {
		err = fmt.Errorf("exit %+v", res.Exit)
	}
	return err
}
