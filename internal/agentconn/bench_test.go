package agentconn_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/paddockhq/paddock/internal/agentconn"
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
				testenv.BenchLatency(b, func() error {
					res, err := sb.client.Run(ctx, agentconn.ExecRequest{Argv: []string{"true"}})
					if err == nil && res.Exit.Code != 0 {
						err = fmt.Errorf("exit %+v", res.Exit)
					}
					return err
				})
			})
			b.Run("docker-exec", func(b *testing.B) {
				testenv.BenchLatency(b, func() error { return testenv.DockerExec(sb.id, "true") })
			})
		})
	}
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
