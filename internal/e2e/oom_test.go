package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestAgentOutlivesMemoryExhaustion: filling /tmp and /dev/shm (tmpfs both,
// counted against the memory limit, each bounded to a quarter of it) past
// the sandbox's memory fails the writers with ENOSPC,
// a process that allocates past it is killed and says so, and the agent
// (PID 1, the same process throughout) keeps serving the next exec. The
// processes the agent starts are the OOM killer's first choice, the agent
// its last.
func TestAgentOutlivesMemoryExhaustion(t *testing.T) {
	s := runningSandbox(t) // 128 MiB of memory
	ctx := bounded(t)
	before, err := s.docker.ContainerInspect(ctx, s.cid)
	if err != nil {
		t.Fatal(err)
	}

	// The agent raises a process's score before it reports it started.
	bg, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"sleep", "600"}, Background: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(s.run(t, "cat", "/proc/"+strconv.Itoa(bg.PID)+"/oom_score_adj")); got != "1000" {
		t.Errorf("an exec's oom_score_adj = %s, want 1000", got)
	}
	if got := strings.TrimSpace(s.run(t, "cat", "/proc/1/oom_score_adj")); got != "0" {
		t.Errorf("the agent's oom_score_adj = %s, want 0", got)
	}

	for _, dir := range []string{"/tmp", "/dev/shm"} {
		if got := strings.TrimSpace(s.run(t, "sh", "-c", "df -k "+dir+" | awk 'NR == 2 { print $2 }'")); got != "32768" {
			t.Errorf("%s holds %s KiB, want 32768 (a quarter of 128 MiB)", dir, got)
		}
		fill, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{
			Argv: []string{"dd", "if=/dev/zero", "of=" + dir + "/fill", "bs=1048576", "count=200"},
		})
		if err != nil {
			t.Fatalf("filling %s: %v", dir, err)
		}
		if fill.Exit == nil || fill.Exit.Code == 0 || fill.Exit.OOMKilled || !strings.Contains(string(fill.Stderr), "No space left on device") {
			t.Fatalf("writing 200 MiB to %s in a 128 MiB sandbox: exit %+v, stderr %q", dir, fill.Exit, fill.Stderr)
		}
	}
	s.run(t, "true")

	// The files stay: /tmp and /dev/shm hold half the memory while a
	// process asks for more than the whole.
	if runtimeUnderTest(t) == testenv.GVisorRuntime {
		t.Log("gVisor: a process allocating past the memory limit ends the whole sandbox (the host kills its Sentry), so the allocation part does not apply")
	} else {
		hog, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{
			Argv: []string{"dd", "if=/dev/zero", "of=/dev/null", "bs=200M", "count=1"},
		})
		if err != nil {
			t.Fatalf("allocating past the memory limit: %v", err)
		}
		if hog.Exit == nil || hog.Exit.Signal != "SIGKILL" || !hog.Exit.OOMKilled {
			t.Fatalf("allocating 200 MiB in a 128 MiB sandbox: exit %+v, stderr %q", hog.Exit, hog.Stderr)
		}
		// What kill-all ends was killed, not out of memory, though memory
		// ran out while it lived.
		if _, err := s.sdk.KillAllProcesses(ctx, "acme", "dev", s.rid); err != nil {
			t.Fatal(err)
		}
		var p pc.Process
		testenv.WaitFor(t, "kill-all to end the background process", func() bool {
			p = s.process(t, bg.ID)
			return p.Exit != nil
		})
		if p.Exit.Signal != "SIGKILL" || p.Exit.OOMKilled {
			t.Fatalf("a background process kill-all ended: exit %+v, want SIGKILL and not oom_killed", p.Exit)
		}
	}

	if got := s.run(t, "echo", "still here"); got != "still here\n" {
		t.Fatalf("after memory ran out: %q", got)
	}
	after, err := s.docker.ContainerInspect(ctx, s.cid)
	if err != nil {
		t.Fatal(err)
	}
	if !after.State.Running || after.State.Pid != before.State.Pid || after.State.StartedAt != before.State.StartedAt {
		t.Fatalf("the sandbox's init changed: before pid %d started %s, after pid %d started %s running %v",
			before.State.Pid, before.State.StartedAt, after.State.Pid, after.State.StartedAt, after.State.Running)
	}
}
