package shim

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/paddockhq/paddock/internal/agentconn"
)

// TestQuietExecReusesReadBuffers runs `true` many times through the agent
// and counts the read buffers made for its output: those are reused from
// process to process, not made for each.
func TestQuietExecReusesReadBuffers(t *testing.T) {
	// Put back after the agent's end (cleanups run last to first).
	newBuf, procs := readBufs.New, runtime.GOMAXPROCS(1)
	t.Cleanup(func() { readBufs.New = newBuf; runtime.GOMAXPROCS(procs) })
	var made atomic.Int64
	readBufs.New = func() any {
		made.Add(1)
		return newBuf()
	}
	// One P (above), so one slot of the pool's per-P cache: with many,
	// each slot is filled once before it is reused.

	_, hc, _ := serveAgent(t, Options{}, false)
	c := agentClient(t, hc)
	run := func() {
		t.Helper()
		res, err := c.Run(t.Context(), agentconn.ExecRequest{Argv: []string{"true"}})
		if err != nil || res.Exit.Code != 0 {
			t.Fatalf("true: %+v, %v", res, err)
		}
	}
	run() // the pool's first buffers
	const execs = 50
	before := made.Load()
	for range execs {
		run()
	}
	// Without the reuse: two per exec. With it, none but when a collection
	// emptied the pool, or under the race detector, which has the pool drop
	// a quarter of what is given back.
	if n := made.Load() - before; n >= execs {
		t.Errorf("%d execs of true made %d read buffers; want fewer than one per exec", execs, n)
	}
}
