package docker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/provider/providertest"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/testenv"
)

// What only gVisor needs. The conformance suite (TestConformanceGVisor)
// and the tests run on each flavour cover the rest.

// TestGVisorPauseResume: runsc pauses inside the sandbox, where the
// freezer does not see it, and the engine's flag is flipped back by late
// events as under runc, so whether a sandbox is paused comes from runsc.
// Inspect must follow Pause and Resume straight after each, round after
// round, see a pause made behind the engine's back, and the agent answer
// afterwards.
func TestGVisorPauseResume(t *testing.T) {
	e := newFlavourEnv(t, gvisor)
	h := e.started(t, e.spec())
	ctx := t.Context()
	c, err := e.cli.ContainerInspect(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	pid := c.State.Pid
	if p, ok := docker.RunscPaused(pid); !ok || p {
		t.Fatalf("a running sandbox: paused=%v known=%v", p, ok)
	}
	for round := range 20 {
		if err := e.p.Pause(ctx, h); err != nil {
			t.Fatalf("round %d: Pause: %v", round, err)
		}
		if st, err := e.p.Inspect(ctx, h); err != nil || st.State != provider.StatePaused {
			t.Fatalf("round %d: after Pause: %+v, %v", round, st, err)
		}
		if p, _ := docker.RunscPaused(pid); !p {
			t.Fatalf("round %d: runsc says running after Pause", round)
		}
		if err := e.p.Resume(ctx, h); err != nil {
			t.Fatalf("round %d: Resume: %v", round, err)
		}
		if st, err := e.p.Inspect(ctx, h); err != nil || st.State != provider.StateRunning {
			t.Fatalf("round %d: after Resume: %+v, %v", round, st, err)
		}
	}

	// Pause the sandbox with runsc itself, as a late event leaves the
	// engine's flag wrong: Inspect reports what runsc says.
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	root := runscRoot(t, pid)
	runsc := func(verb string) error {
		out, err := exec.Command(exe, "--root", root, verb, h.ID).CombinedOutput()
		if err != nil {
			return fmt.Errorf("runsc %s: %v: %s", verb, err, out)
		}
		return nil
	}
	if err := runsc("pause"); err != nil {
		t.Fatal(err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = runsc("resume")
		}
	})
	if c, err := e.cli.ContainerInspect(ctx, h.ID); err != nil || c.State.Paused {
		t.Fatalf("the engine noticed: %+v, %v", c.State, err)
	}
	if st, err := e.p.Inspect(ctx, h); err != nil || st.State != provider.StatePaused {
		t.Fatalf("Inspect of a sandbox runsc paused: %+v, %v", st, err)
	}
	if err := runsc("resume"); err != nil {
		t.Fatal(err)
	}
	resumed = true
	if st, err := e.p.Inspect(ctx, h); err != nil || st.State != provider.StateRunning {
		t.Fatalf("Inspect after runsc resumed it: %+v, %v", st, err)
	}

	conn, err := e.p.DialAgent(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := providertest.CheckAgent(ctx, conn); err != nil {
		t.Fatalf("the agent after pausing: %v", err)
	}
}

// runscRoot is the --root in the argv of the runsc sandbox process pid.
func runscRoot(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(a, "--root="); ok {
			return v
		}
	}
	t.Fatalf("no --root in %q", b)
	return ""
}

// TestGVisorDestroyPaused: a paused gVisor sandbox does not die of SIGKILL
// (the engine waits 10 s, then leaves its shim and sandbox running for
// good), so Destroy thaws it first. It must leave none of the
// container's processes on the host.
func TestGVisorDestroyPaused(t *testing.T) {
	e := newFlavourEnv(t, gvisor)
	h := e.started(t, e.spec())
	ctx := t.Context()
	if err := e.p.Pause(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := e.p.Destroy(ctx, h); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		if left := processesNaming(t, h.ID); len(left) > 0 {
			return fmt.Errorf("processes of the destroyed sandbox left on the host: %q", left)
		}
		return nil
	})
}

// processesNaming returns the command lines of the host's processes that
// name id (a container's shim, sandbox and gofer do).
func processesNaming(t *testing.T, id string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // gone meanwhile
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, id) {
			out = append(out, cmd)
		}
	}
	return out
}

// TestGVisorPidsLimit: the pids cgroup of a gVisor sandbox counts its
// kernel's threads and a stub per process too, so the provider raises it
// (see GVisorPidsLimit). A sandbox keeps running with as many processes as
// its spec allows, busy or idle, started by its agent; far past the limit,
// the sandbox stops (gVisor cannot fail a fork for the cgroup's sake) and
// the host does not notice.
func TestGVisorPidsLimit(t *testing.T) {
	e := newFlavourEnv(t, gvisor)
	spec := e.spec()
	spec.Resources.PidsLimit = 32
	h := e.started(t, spec)
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) { return e.p.DialAgent(ctx, h) })
	t.Cleanup(func() { c.Close() })
	ctx := t.Context()

	// The agent and its threads, the shell, 10 busy and 10 idle processes:
	// within 32. The exec's leftovers are killed when it ends.
	res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", `
		for i in $(seq 10); do (while :; do :; done) & sleep 60 & done
		sleep 1; ls -d /proc/[0-9]* | wc -l`}})
	if err != nil || res.Exit.Code != 0 {
		t.Fatalf("20 processes in a sandbox allowed 32: %+v, %v", res, err)
	}
	if n, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout))); err != nil || n < 22 {
		t.Fatalf("%q processes running, want the 20, the shell and the agent", res.Stdout)
	}
	if st, err := e.p.Inspect(ctx, h); err != nil || st.State != provider.StateRunning {
		t.Fatalf("after 20 processes: %+v, %v", st, err)
	}
	if err := c.Health(ctx); err != nil {
		t.Fatalf("the agent after 20 processes: %v", err)
	}

	// Far past the limit: the sandbox stops. The exec may fail or not, as
	// the sandbox goes away under it.
	bomb, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, _ = c.Run(bomb, agentconn.ExecRequest{Argv: []string{"sh", "-c", "for i in $(seq 500); do sleep 60 & done; wait"}})
	testenv.Eventually(t, func() error {
		st, err := e.p.Inspect(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != provider.StateStopped {
			return fmt.Errorf("a sandbox far past its pids limit is still %s", st.State)
		}
		return nil
	})
}

// TestFlavoursShareAnEngine: a docker provider and a gvisor provider of
// one installation on one engine each list and act on only their own
// compute, so neither runs the other's sandboxes under its runtime.
func TestFlavoursShareAnEngine(t *testing.T) {
	e := newFlavourEnv(t, gvisor)
	g := e.p
	e.flavour = runc
	d := e.provider(t, e.shim)
	ctx := t.Context()
	hg, err := g.Create(ctx, e.spec())
	if err != nil {
		t.Fatal(err)
	}
	hd, err := d.Create(ctx, e.spec())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p          *docker.Provider
		own, other provider.Handle
	}{{g, hg, hd}, {d, hd, hg}} {
		listed, err := tc.p.List(ctx, e.instance)
		if err != nil || len(listed) != 1 || listed[0].Handle.ID != tc.own.ID {
			t.Errorf("%s lists %v, %v; want only %s", tc.p.Name(), listed, err, tc.own.ID)
		}
		// Even a handle that names no provider, as a bare id does.
		bare := provider.Handle{ID: tc.other.ID}
		if _, err := tc.p.Inspect(ctx, bare); !errors.Is(err, errdefs.ErrNotFound) {
			t.Errorf("%s inspecting the other's sandbox: %v, want not found", tc.p.Name(), err)
		}
		if err := tc.p.Start(ctx, bare); !errors.Is(err, errdefs.ErrNotFound) {
			t.Errorf("%s starting the other's sandbox: %v, want not found", tc.p.Name(), err)
		}
	}
	c, err := e.cli.ContainerInspect(ctx, hg.ID)
	if err != nil || c.HostConfig.Runtime != gvisor.runtime || c.State.Status != "created" {
		t.Fatalf("the gvisor sandbox after the docker provider's calls: %+v, %v", c.State, err)
	}
}
