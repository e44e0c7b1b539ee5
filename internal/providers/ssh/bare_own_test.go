package ssh

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestBareOwnership runs the scripts that start, see and kill a bare
// sandbox's process on this host's sh: a process is the sandbox's by its
// pid and start time, whatever its command line reads (empty while an
// exec is loading the next program, which once made a starting agent
// look exited); a pid whose start time differs (a reused pid) is not;
// a pid file of one field, from before the start time was kept, is
// checked by the command line; a killed process is seen dead.
func TestBareOwnership(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"started":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := func(script string, args ...string) string {
		t.Helper()
		out, err := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("sh: %v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	alive := func() string {
		t.Helper()
		id, rest, _ := strings.Cut(sh(seeScript, dir), " ")
		state, _, _ := strings.Cut(rest, " ")
		if id != filepath.Base(dir) {
			t.Fatalf("seeScript named %q, not the sandbox %q", id, filepath.Base(dir))
		}
		return state
	}
	pidFile := filepath.Join(dir, "pid")
	// A command line that never names the sandbox's socket: no read of it
	// can prove the process is the sandbox's.
	// launch starts argv as a sandbox's process and returns its pid.
	launch := func(argv ...string) (string, *os.Process) {
		t.Helper()
		out := sh(launchScript, append([]string{filepath.Join(dir, "agent.log"), pidFile}, argv...)...)
		pid, err := strconv.Atoi(out)
		if err != nil {
			t.Fatalf("launchScript printed %q, not a pid", out)
		}
		proc, _ := os.FindProcess(pid)
		t.Cleanup(func() { proc.Kill() })
		return out, proc
	}
	out, proc := launch("sleep", "600")
	recorded, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(recorded))
	if len(fields) != 2 || fields[0] != out {
		t.Fatalf("the pid file holds %q; want the pid %s and its start time", recorded, out)
	}
	if got := alive(); got != "alive" {
		t.Fatalf("the launched process is %s", got)
	}

	// The same pid, started at another time: a pid reused.
	if err := os.WriteFile(pidFile, []byte(out+" 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := alive(); got != "dead" {
		t.Fatalf("a pid whose start time is not the recorded one is %s", got)
	}
	// An earlier version's pid file: the command line decides, and this
	// one does not name the socket.
	if err := os.WriteFile(pidFile, []byte(out+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := alive(); got != "dead" {
		t.Fatalf("with a pid file of one field, a process whose command line names no socket is %s", got)
	}

	if err := os.WriteFile(pidFile, recorded, 0o600); err != nil {
		t.Fatal(err)
	}
	sh(killScript, dir)
	if got := alive(); got != "dead" {
		t.Fatalf("the killed process is %s", got)
	}
	if err := proc.Signal(syscall.Signal(0)); err == nil {
		if st, _ := os.ReadFile("/proc/" + out + "/stat"); !strings.Contains(string(st), ") Z ") {
			t.Fatalf("killScript left the process running: %s", st)
		}
	}

	// An earlier version's pid file, of a process whose command line
	// names the socket (as the agent's unshare does): it is the sandbox's.
	out, _ = launch("sh", "-c", "sleep 600; exit 0", "sh", filepath.Join(dir, "agent.sock"))
	if err := os.WriteFile(pidFile, []byte(out+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := alive(); got != "alive" {
		t.Fatalf("with a pid file of one field, a process whose command line names the socket is %s", got)
	}
	sh(killScript, dir)
	if got := alive(); got != "dead" {
		t.Fatalf("the killed process is %s", got)
	}
}
