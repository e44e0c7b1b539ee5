package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	goruntime "runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/testenv"
)

// BenchmarkPreview compares a request through a runtime's preview URL (the
// control plane, the agent link, the port-forward stream) with the same
// request sent straight to the server from inside the sandbox's own
// network namespace: the latency of a small GET over a kept-alive
// connection, and the time and throughput of a 256 MiB download.
//
//	go test -run '^$' -bench Preview -benchtime 200x ./internal/e2e/
func BenchmarkPreview(b *testing.B) {
	s := startPreviewSandbox(b, 0)
	ctx := context.Background()
	pid := sandboxPid(b, s)
	direct := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return dialInNetns(pid, "127.0.0.1:8080") },
	}}
	viaPreview := loopbackClient()
	get := func(c *http.Client, url string, auth bool) (int64, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return 0, err
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+s.env.Key)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		return n, err
	}
	const big = 256 << 20
	var previewMedian float64
	for _, tc := range []struct {
		name  string
		path  string
		bytes int64
	}{
		{"request", "/", 0},
		{"download-256MiB", fmt.Sprintf("/download?bytes=%d", big), big},
	} {
		b.Run(tc.name+"/preview", func(b *testing.B) {
			previewMedian = testenv.BenchLatency(b, func() error {
				_, err := get(viaPreview, "http://"+s.host+tc.path, true)
				return err
			})
			if tc.bytes > 0 && previewMedian > 0 {
				b.ReportMetric(float64(tc.bytes)/(1<<20)/(previewMedian/1e6), "MiB/s")
			}
		})
		b.Run(tc.name+"/direct-in-netns", func(b *testing.B) {
			median := testenv.BenchLatency(b, func() error {
				_, err := get(direct, "http://127.0.0.1:8080"+tc.path, false)
				return err
			})
			if tc.bytes > 0 && median > 0 {
				b.ReportMetric(float64(tc.bytes)/(1<<20)/(median/1e6), "MiB/s")
			}
			if median > 0 {
				b.ReportMetric(previewMedian/median, "x-direct")
			}
		})
	}
}

// sandboxPid is the host pid of the sandbox container's init.
func sandboxPid(b *testing.B, s *previewSandbox) int {
	var rt struct {
		CurrentSandboxID string `json:"current_sandbox_id"`
	}
	s.env.Must(b, 200, "GET", s.rtPath, nil).Decode(b, &rt)
	var row struct {
		ProviderSandboxID string `json:"provider_sandbox_id"`
	}
	s.env.Must(b, 200, "GET", "/api/v1/org/acme/sandboxes/"+rt.CurrentSandboxID, nil).Decode(b, &row)
	c, err := testenv.DockerClient(b).ContainerInspect(context.Background(), row.ProviderSandboxID)
	if err != nil {
		b.Fatal(err)
	}
	return c.State.Pid
}

// dialInNetns connects to addr from inside the network namespace of pid:
// a thread of its own enters the namespace, makes the socket there, and
// dies with its goroutine, so no other goroutine ever runs in it.
func dialInNetns(pid int, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread exits with this goroutine
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("setns: %w", err)}
			return
		}
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
