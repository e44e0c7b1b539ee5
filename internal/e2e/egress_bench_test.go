package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// BenchmarkNetworkStart compares, in one run of the built server, the time
// from nothing to a first command for a runtime in proxy mode (the
// internal network, the proxy's environment and the CA bundle the agent
// writes) and one in none mode: create the project, start, `echo`.
//
//	go test -run '^$' -bench NetworkStart -benchtime 20x ./internal/e2e
func BenchmarkNetworkStart(b *testing.B) {
	const key = "pdk_00000000000000000000000000000000000000000000e9e7"
	_, c := serveWithEgress(b, key)
	ctx := context.Background()
	n := 0
	for _, mode := range []string{pc.NetworkNone, pc.NetworkProxy} {
		b.Run(mode, func(b *testing.B) {
			testenv.BenchTimed(b, func() (time.Duration, error) {
				n++
				name := fmt.Sprintf("%s-%d", mode, n)
				t0 := time.Now()
				network := &pc.NetworkPolicy{Mode: mode}
				if mode == pc.NetworkProxy {
					network.Allow = []string{"pypi.org"} // rules apply only in proxy mode
				}
				p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: name, Runtime: &pc.RuntimeConfig{
					Image: testenv.DefaultImage, MemoryMB: 256, Network: network,
				}})
				if err != nil {
					return 0, err
				}
				if _, err := c.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
					return 0, err
				}
				res, err := c.Exec(ctx, "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: []string{"echo", "hello"}})
				d := time.Since(t0)
				if err == nil && string(res.Stdout) != "hello\n" {
					err = fmt.Errorf("echo: %q", res.Stdout)
				}
				if err != nil {
					return d, err
				}
				return d, c.DeleteProject(ctx, "acme", "dev", name)
			})
		})
	}
}
