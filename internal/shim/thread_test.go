package shim

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	"golang.org/x/sys/unix"
)

// TestOnThreadGivesThreadsBack: a call as another user runs on a thread
// that is given back afterwards, with exactly the identity it had (ids,
// file-system ids, groups, capabilities), rather than thrown away: a
// sandbox at its pids limit refuses the runtime a new thread, which ends
// the agent. A thread whose change cannot be undone (no_new_privs) is
// still thrown away.
func TestOnThreadGivesThreadsBack(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	u := sandboxUsers[UserDefault]
	want := ownIdentity(t)
	// Both ways of switching: the file-system ids, and the effective ones
	// (where the kernel lacks the first, as gVisor does).
	setups := map[string]func() error{
		"file-system ids": func() error { return setFileIDs(u) },
		"effective ids": func() error {
			if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
				return e
			}
			return setEffectiveIDs(u)
		},
	}
	for name, setup := range setups {
		const calls = 200
		var mu sync.Mutex
		tids := map[int]bool{}
		for range calls {
			err := onThread(setup, restoreThread, func() error {
				f, err := os.CreateTemp("", "as-user")
				if err != nil {
					return err
				}
				f.Close()
				defer os.Remove(f.Name())
				if st, err := os.Stat(f.Name()); err != nil || int(st.Sys().(*syscall.Stat_t).Uid) != u.uid {
					return fmt.Errorf("%s: a file made in the call is not user's (%v)", name, err)
				}
				mu.Lock()
				tids[unix.Gettid()] = true
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(tids) > calls/2 {
			t.Fatalf("%s: %d calls ran on %d threads: threads are thrown away", name, calls, len(tids))
		}
		for tid := range tids {
			if got, ok := threadIdentityOf(t, tid); ok && got != want {
				t.Errorf("%s: thread %d after the calls:\n%s\nwant the agent's:\n%s", name, tid, got, want)
			}
		}
	}

	// The runtime keeps the main thread (the process's own id) alive,
	// wedged, when a goroutine ends locked to it: look for another.
	for range 10 {
		var tid int
		err := onThread(func() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }, restoreThread, func() error {
			tid = unix.Gettid()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if tid == os.Getpid() {
			continue
		}
		testenv.Eventually(t, func() error {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err == nil {
				return fmt.Errorf("thread %d, which set no_new_privs, still runs", tid)
			}
			return nil
		})
		return
	}
	t.Fatal("every call ran on the main thread")
}

// ownIdentity is the identity of the calling goroutine's thread.
func ownIdentity(t *testing.T) string {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	got, ok := threadIdentityOf(t, unix.Gettid())
	if !ok {
		t.Fatal("no thread")
	}
	return got
}

// threadIdentityOf is the identity lines of thread tid of this process
// (Uid, Gid, Groups, the capability sets and NoNewPrivs), false if it
// has ended.
func threadIdentityOf(t *testing.T, tid int) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for line := range strings.Lines(string(b)) {
		for _, p := range []string{"Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:", "NoNewPrivs:"} {
			if strings.HasPrefix(line, p) {
				keep = append(keep, strings.TrimSpace(line))
			}
		}
	}
	return strings.Join(keep, "\n"), true
}
