package shim

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// probeEnv makes the test binary a probe (see init): it tries, as
// whoever runs it, to read the limits of and to signal (signal 0, which
// only checks) each thread of the process named in the variable, and
// prints every thread where it could.
const probeEnv = "SHIM_TEST_PROBE_PID"

func init() {
	v := os.Getenv(probeEnv)
	if v == "" {
		return
	}
	pid, _ := strconv.Atoi(v)
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	for _, t := range tasks {
		tid, _ := strconv.Atoi(t.Name())
		var lim unix.Rlimit
		if err := unix.Prlimit(tid, unix.RLIMIT_NOFILE, nil, &lim); err != unix.EPERM {
			fmt.Printf("prlimit %d: %v\n", tid, err)
		}
		if err := unix.Tgkill(pid, tid, 0); err != unix.EPERM {
			fmt.Printf("tgkill %d: %v\n", tid, err)
		}
	}
	fmt.Println("probed", len(tasks))
	os.Exit(0)
}

// probeBinary copies the test binary where user may run it.
func probeBinary(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	bin := filepath.Join(dir, "probe")
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestAsUserLeavesAgentUnreachable: while a call runs as user, what user
// may do to a process of the agent's — change its limits (prlimit) or
// signal it (tgkill) — fails with EPERM on every one of the agent's
// threads, the call's own among them; and what the call creates is still
// user's. Both ways of switching are checked: the file-system ids, and
// the effective ones (where the kernel lacks the first, as gVisor does).
func TestAsUserLeavesAgentUnreachable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	u := sandboxUsers[UserDefault]
	t.Run("file-system ids", func(t *testing.T) {
		testAgentUnreachable(t, u, func() error { return setFileIDs(u) })
	})
	t.Run("effective ids", func(t *testing.T) {
		testAgentUnreachable(t, u, func() error {
			if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, 0, 0, 0); e != 0 {
				return e
			}
			return setEffectiveIDs(u)
		})
	})
}

func testAgentUnreachable(t *testing.T, u sandboxUser, setup func() error) {
	dir := t.TempDir()
	// t.TempDir's own parent is private to root.
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := probeBinary(t, dir)
	inside, done := make(chan struct{}), make(chan struct{})
	callErr := make(chan error, 1)
	go func() {
		callErr <- onThread(setup, restoreThread, func() error {
			err := os.WriteFile(filepath.Join(dir, "made"), nil, 0o644)
			close(inside)
			<-done
			return err
		})
	}()
	select {
	case <-inside:
	case err := <-callErr:
		t.Fatalf("call as user: %v", err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{probeEnv + "=" + strconv.Itoa(os.Getpid())}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid), Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	close(done)
	if err := <-callErr; err != nil {
		t.Fatalf("call as user: %v", err)
	}
	if err != nil || !strings.HasPrefix(string(out), "probed ") {
		t.Fatalf("user reached the agent's threads (%v):\n%s", err, out)
	}
	st, err := os.Stat(filepath.Join(dir, "made"))
	if err != nil {
		t.Fatal(err)
	}
	if sys := st.Sys().(*syscall.Stat_t); int(sys.Uid) != u.uid || int(sys.Gid) != u.gid {
		t.Fatalf("a file the call made is %d:%d, want %d:%d", sys.Uid, sys.Gid, u.uid, u.gid)
	}
}

// TestOnThreadPanicIsAnError: a handler that panics on a thread of its
// own (a file call as user) fails that call; the agent lives on.
func TestOnThreadPanicIsAnError(t *testing.T) {
	err := onThread(func() error { return nil }, restoreThread, func() error {
		var m map[string]int
		m["x"]++ // a nil map: panics
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("onThread returned %v, want the panic as an error", err)
	}
}
