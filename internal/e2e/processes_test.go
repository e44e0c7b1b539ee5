package e2e

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// liveProcesses counts the sandbox's processes other than the agent and
// the counting command itself, zombies excluded.
func (s *sandbox) liveProcesses(t *testing.T) int {
	t.Helper()
	out := s.run(t, "sh", "-c", `n=0; for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = 1 ] || [ "$p" = $$ ] && continue; grep -q '^State:.*Z' $d/status 2>/dev/null && continue; [ -e $d ] && n=$((n+1)); done; echo $n`)
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("counting processes: %q", out)
	}
	return n
}

// TestForegroundExecLeavesNothing is item 4 of the hardening review, on
// real Docker: after `timeout -s KILL … fork bomb` nothing is left holding
// the PID limit, and the next exec works; a process that left the exec's
// group goes with it; a background process stays; kill-all takes
// everything but the agent.
func TestForegroundExecLeavesNothing(t *testing.T) {
	// The review's bomb needs bash, which retries a failed fork (busybox's
	// sh gives up, and the bomb dies out by itself): the default image.
	testenv.RequireDocker(t, testenv.DefaultImage)
	env, docker, _, _ := dockerEnv(t)
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
		Name: "bomb", Runtime: &pc.RuntimeConfig{Image: testenv.DefaultImage, CPUMillis: 1000, MemoryMB: 512, PidsLimit: 64},
	}).Decode(t, &p)
	s := startSandbox(t, env, docker, p, "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID)
	ctx := bounded(t)

	res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"timeout", "-s", "KILL", "3", "bash", "-c", ":(){ :|:& };:"}})
	if err != nil {
		t.Fatalf("the fork bomb's exec: %v", err)
	}
	if res.Exit == nil {
		t.Fatalf("the fork bomb did not exit: %+v", res)
	}
	if n := s.liveProcesses(t); n != 0 {
		t.Fatalf("%d processes outlived the fork bomb's exec", n)
	}

	out := s.run(t, "sh", "-c", "setsid sleep 600 >/dev/null 2>&1 & echo $!; sleep 600 >/dev/null 2>&1 & echo $!")
	for _, pid := range strings.Fields(out) {
		if st := s.run(t, "sh", "-c", "grep '^State' /proc/"+pid+"/status 2>/dev/null || echo gone"); !strings.Contains(st, "gone") && !strings.Contains(st, "zombie") {
			t.Fatalf("process %s outlived its exec: %s", pid, st)
		}
	}

	bg, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"sh", "-c", "sleep 600 & sleep 600"}, Background: true})
	if err != nil {
		t.Fatal(err)
	}
	s.run(t, "true")
	if p := s.process(t, bg.ID); !p.Running {
		t.Fatalf("the background process did not survive another exec: %+v", p)
	}
	live := s.liveProcesses(t) // the background process's sleeps (and its sh, unless it exec'd the last)
	if live < 2 {
		t.Fatalf("%d processes besides the agent, want the background process's", live)
	}

	killed, err := s.sdk.KillAllProcesses(ctx, "acme", "dev", s.rid)
	if err != nil {
		t.Fatal(err)
	}
	if killed.Killed != live {
		t.Fatalf("kill-all killed %d, want %d", killed.Killed, live)
	}
	testenv.WaitFor(t, "the background process to exit", func() bool { return !s.process(t, bg.ID).Running })
	if n := s.liveProcesses(t); n != 0 {
		t.Fatalf("%d processes left after kill-all", n)
	}
	if got := s.run(t, "echo", "still here"); got != "still here\n" {
		t.Fatalf("the agent after kill-all: %q", got)
	}
}

// TestProcessLimitSaysWhatToDo: when the sandbox is out of processes, the
// error says how to get out of it, and the agent answers call after call.
func TestProcessLimitSaysWhatToDo(t *testing.T) {
	s := runningSandbox(t) // pids_limit 64
	ctx := bounded(t)
	// One background sleep per exec, until the sandbox has no room.
	var last error
	for i := 0; last == nil; i++ {
		if i > 200 {
			t.Fatal("200 processes started under a limit of 64")
		}
		_, last = s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"sleep", "600"}, Background: true})
	}
	var apiErr *pc.Error
	if !errors.As(last, &apiErr) || apiErr.Code != "process_limit" || apiErr.StatusCode != 429 || !strings.Contains(apiErr.Message, "kill --all") {
		t.Fatalf("exec at the process limit = %v", last)
	}
	// The agent keeps answering at the limit, as user and as root, file
	// calls among them: it once threw a thread away after each call as
	// user, and the runtime, refused a new one, ended the agent. Not under
	// gVisor, whose limit is the host cgroup's, reached by its own tasks
	// for the processes (see docker.GVisorPidsLimit): at it, the sandbox
	// kernel itself may fail a call.
	storm := 150
	if runtimeUnderTest(t) == testenv.GVisorRuntime {
		storm = 0
	}
	for i := range storm {
		user := []string{"", "root"}[i%2]
		_, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"true"}, User: user})
		if !errors.As(err, &apiErr) || apiErr.Code != "process_limit" {
			t.Fatalf("exec %d as %q at the process limit = %v", i, user, err)
		}
		if _, err := s.sdk.StatFile(ctx, "acme", "dev", s.rid, "/tmp"); err != nil {
			t.Fatalf("stat %d at the process limit: %v", i, err)
		}
	}
	if _, err := s.sdk.KillAllProcesses(ctx, "acme", "dev", s.rid); err != nil {
		t.Fatal(err)
	}
	if got := s.run(t, "echo", "ok"); got != "ok\n" {
		t.Fatalf("after kill-all: %q", got)
	}
}

// TestReadNonRegularFiles: through the API, reading a socket (it answered
// 500) or a FIFO (it blocked forever) is 422 not_a_regular_file.
func TestReadNonRegularFiles(t *testing.T) {
	s := runningSandbox(t)
	ctx := bounded(t)
	s.run(t, "mkfifo", "/tmp/fifo")
	for _, p := range []string{"/.paddock/run/agent.sock", "/tmp/fifo", "/dev/zero"} {
		r, err := s.sdk.ReadFile(ctx, "acme", "dev", s.rid, p)
		if err == nil {
			r.Close()
		}
		var apiErr *pc.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 422 || apiErr.Code != "not_a_regular_file" {
			t.Fatalf("reading %s = %v; want 422 not_a_regular_file", p, err)
		}
	}
}

// TestTerminalOpensTheLoginShell: a terminal with no command opens the
// user's login shell — bash on the default image, not dash.
func TestTerminalOpensTheLoginShell(t *testing.T) {
	testenv.RequireDocker(t, testenv.DefaultImage)
	env, docker, _, _ := dockerEnv(t)
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
		Name: "deb", Runtime: &pc.RuntimeConfig{Image: testenv.DefaultImage, MemoryMB: 256, PidsLimit: 64},
	}).Decode(t, &p)
	s := startSandbox(t, env, docker, p, "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID)
	ctx := bounded(t)
	tm, err := s.sdk.Terminal(ctx, "acme", "dev", s.rid, pc.TerminalOptions{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	if _, err := io.WriteString(tm, "echo shell=$0 bash=${BASH_VERSION%%.*}; exit\n"); err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(tm)
	if !strings.Contains(string(out), "shell=/bin/bash bash=5") {
		t.Fatalf("the terminal's shell said %q", out)
	}
}
