package shim

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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

// TestExitReportedWhileOutputIsHeldOpen runs a command that leaves a
// process of its own session holding its stdout, outside the sweep's
// reach: its exit and output are reported once the agent stops waiting
// for the output (250 ms after the exit), not when that process ends.
func TestExitReportedWhileOutputIsHeldOpen(t *testing.T) {
	_, hc, _ := serveAgent(t, Options{}, false)
	c := agentClient(t, hc)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // far less than the sleep
	defer cancel()
	res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c",
		"setsid env -u " + markVar + " sleep 3600 & until [ \"$(cat /proc/$!/comm)\" = sleep ]; do :; done; echo $!"}})
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	pid, perr := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	if perr == nil {
		defer syscall.Kill(pid, syscall.SIGKILL)
	}
	if res.Exit.Code != 0 || perr != nil {
		t.Fatalf("exit %+v, stdout %q", res.Exit, res.Stdout)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the sleep holding the output is gone (%v): the test tests nothing", err)
	}
}
