package shim

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/testenv"
)

// inPIDNamespace is set in the copy of the test binary that
// TestSweepSkippedWhenNothingWasCreated runs as PID 1 of a PID namespace
// of its own.
const inPIDNamespace = "PADDOCK_TEST_IN_PID_NAMESPACE"

// TestSweepSkippedWhenNothingWasCreated runs an agent as PID 1 of a PID
// namespace of its own, with its own /proc, as in a sandbox. A foreground
// process that created nothing is not followed by a sweep (the kernel's
// last PID is still its own); one that left a process of another session
// running is, and that process is killed.
func TestSweepSkippedWhenNothingWasCreated(t *testing.T) {
	if os.Getenv(inPIDNamespace) == "" {
		if os.Geteuid() != 0 {
			t.Skip("a PID namespace of its own needs root")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), inPIDNamespace+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
			t.Fatalf("in a PID namespace of its own: %v\n%s", err, out)
		}
		return
	}
	if os.Getpid() != 1 {
		t.Fatalf("pid %d, want 1", os.Getpid())
	}
	// This namespace's /proc, on mounts no longer shared with the host's.
	if err := syscall.Mount("", "/", "", syscall.MS_PRIVATE|syscall.MS_REC, ""); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		t.Fatal(err)
	}
	// The skip's bound against a wrap of the PIDs, long enough here that
	// the machine's speed does not matter.
	defer func(d time.Duration) { quietFor = d }(quietFor)
	quietFor = time.Hour

	var log testenv.Buffer
	_, hc, _ := serveAgent(t, Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&log, t.Output()), &slog.HandlerOptions{Level: slog.LevelDebug}))}, false)
	c := agentClient(t, hc)
	ctx := t.Context()
	run := func(argv ...string) (id, stdout string) {
		t.Helper()
		es, err := c.Exec(ctx, agentconn.ExecRequest{Argv: argv})
		if err != nil {
			t.Fatal(err)
		}
		var out testenv.Buffer
		st, err := es.Wait(&out, io.Discard)
		if err != nil || st.Code != 0 {
			t.Fatalf("%q: exit %+v: %v", argv, st, err)
		}
		return es.ID(), out.String()
	}
	skipped := func(id string) bool {
		return strings.Contains(log.String(), `msg="nothing was created since the process; no sweep" id=`+id+"\n")
	}

	// Something else may take a PID in between (a thread the Go runtime
	// starts), and then the sweep runs: some true of many goes without.
	testenv.WaitFor(t, "a true not followed by a sweep", func() bool {
		id, _ := run("true")
		return skipped(id)
	})

	id, out := run("sh", "-c", "setsid sleep 600 >/dev/null 2>&1 & echo $!")
	if skipped(id) {
		t.Fatalf("no sweep after a process that started another:\n%s", log.String())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("the sleep's pid %q: %v", out, err)
	}
	// Killed by the sweep, then reaped by the agent, its parent now.
	testenv.WaitFor(t, "the sleep of another session killed", func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
}
