package docker_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
)

// TestPauseStateFromTheKernel: whether a sandbox is paused is what the
// kernel's freezer says, so pause and resume read right straight after
// each other, and a state flipped behind the engine's back (a frozen or
// thawed cgroup, as a late engine event leaves its flag) is seen as it
// really is.
func TestPauseStateFromTheKernel(t *testing.T) {
	e := newEnv(t)
	h := e.started(t, e.spec())
	ctx := t.Context()
	pid := func() int {
		c, err := e.cli.ContainerInspect(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		return c.State.Pid
	}
	if f, ok := docker.Frozen(pid()); !ok || f {
		t.Fatalf("a running sandbox: frozen=%v known=%v", f, ok)
	}
	for round := range 20 {
		if err := e.p.Pause(ctx, h); err != nil {
			t.Fatalf("round %d: Pause: %v", round, err)
		}
		if st, err := e.p.Inspect(ctx, h); err != nil || st.State != provider.StatePaused {
			t.Fatalf("round %d: after Pause: %+v, %v", round, st, err)
		}
		if f, _ := docker.Frozen(pid()); !f {
			t.Fatalf("round %d: not frozen after Pause", round)
		}
		if err := e.p.Resume(ctx, h); err != nil {
			t.Fatalf("round %d: Resume: %v", round, err)
		}
		if st, err := e.p.Inspect(ctx, h); err != nil || st.State != provider.StateRunning {
			t.Fatalf("round %d: after Resume: %+v, %v", round, st, err)
		}
		if f, _ := docker.Frozen(pid()); f {
			t.Fatalf("round %d: frozen after Resume", round)
		}
		if out := e.mustExec(t, h.ID, "echo", "awake"); out != "awake\n" {
			t.Fatalf("round %d: exec after Resume: %q", round, out)
		}
	}
	// The engine's flag and the kernel disagree, as while a late event is
	// pending: freeze the cgroup behind the engine's back. Inspect reports
	// what the kernel says.
	state := freezerStateFile(t, pid())
	write := func(v string) {
		t.Helper()
		if err := os.WriteFile(state, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("FROZEN")
	t.Cleanup(func() { _ = os.WriteFile(state, []byte("THAWED"), 0o644) })
	if c, err := e.cli.ContainerInspect(ctx, h.ID); err != nil || c.State.Paused {
		t.Fatalf("the engine noticed: %+v, %v", c.State, err)
	}
	if st, err := e.p.Inspect(ctx, h); err != nil || st.State != provider.StatePaused {
		t.Fatalf("Inspect of a frozen sandbox the engine calls running: %+v, %v", st, err)
	}
	write("THAWED")
	if st, err := e.p.Inspect(ctx, h); err != nil || st.State != provider.StateRunning {
		t.Fatalf("Inspect after thawing: %+v, %v", st, err)
	}
}

// freezerStateFile is the cgroup v1 freezer.state of the process pid; the
// test skips where the host has no v1 freezer.
func freezerStateFile(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "freezer") {
			return filepath.Join("/sys/fs/cgroup/freezer", parts[2], "freezer.state")
		}
	}
	t.Skip("no cgroup v1 freezer on this host")
	return ""
}
