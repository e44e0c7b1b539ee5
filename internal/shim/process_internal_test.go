package shim

import (
	"runtime/metrics"
	"testing"

	"github.com/paddockhq/paddock/internal/agentconn"
)

// TestQuietExecReusesReadBuffers runs `true` many times through the agent
// and counts the heap allocations of a read buffer's size or more: the two
// buffers each process's output is read through are reused from process to
// process, not allocated for each.
func TestQuietExecReusesReadBuffers(t *testing.T) {
	_, hc, _ := serveAgent(t, Options{}, false)
	c := agentClient(t, hc)
	run := func() {
		t.Helper()
		res, err := c.Run(t.Context(), agentconn.ExecRequest{Argv: []string{"true"}})
		if err != nil || res.Exit.Code != 0 {
			t.Fatalf("true: %+v, %v", res, err)
		}
	}
	for range 5 {
		run() // the connection and the pool's first buffers
	}
	const execs = 50
	before := largeAllocs()
	for range execs {
		run()
	}
	// Without the reuse: two per exec. With it, none but when a collection
	// emptied the pool, or under the race detector, which has the pool drop
	// a quarter of what is given back.
	if n := largeAllocs() - before; n >= execs {
		t.Errorf("%d execs of true made %d allocations of %d bytes or more; want fewer than one per exec", execs, n, readBufSize)
	}
}

// largeAllocs is how many heap allocations of readBufSize bytes or more
// this process has made.
func largeAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs-by-size:bytes"}}
	metrics.Read(s)
	h := s[0].Value.Float64Histogram()
	var n uint64
	for i, count := range h.Counts {
		if h.Buckets[i] >= readBufSize {
			n += count
		}
	}
	return n
}
