package shim

import (
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// reaperWithoutSIGCHLD starts a reaper that only its pidfd watches can
// make reap: SIGCHLD no longer reaches it.
func reaperWithoutSIGCHLD(t *testing.T) *Reaper {
	t.Helper()
	fd, err := unix.PidfdOpen(os.Getpid(), unix.PIDFD_NONBLOCK)
	if err != nil {
		t.Skipf("no pidfds on this kernel (%v): SIGCHLD alone reaps", err)
	}
	_ = unix.Close(fd)
	r, err := StartReaper(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	signal.Stop(r.sigc)
	return r
}

// TestReaperWatchesItsChildren: a child the reaper started is reaped
// when it exits even with no SIGCHLD coming (its pidfd wakes the reaper),
// so an exec's end does not wait on the signal's way through the runtime.
func TestReaperWatchesItsChildren(t *testing.T) {
	r := reaperWithoutSIGCHLD(t)
	exited := make(chan syscall.WaitStatus, 1)
	pid, err := r.Start(func() (int, error) {
		return syscall.ForkExec("/bin/sh", []string{"sh", "-c", "exit 7"}, &syscall.ProcAttr{})
	}, func(ws syscall.WaitStatus) { exited <- ws })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ws := <-exited:
		if ws.ExitStatus() != 7 {
			t.Fatalf("child %d exited %d, want 7", pid, ws.ExitStatus())
		}
	case <-time.After(time.Minute):
		t.Fatalf("child %d was not reaped without SIGCHLD", pid)
	}
	if r.noPidfd {
		t.Fatal("the reaper found pidfds unusable on this kernel")
	}
}

// TestReaperWatchSeesAnEarlyExit: a child that exits before its watch
// begins to wait (the poller saw the pidfd ready first, and forgets it
// when the wait begins) is reaped all the same. On one thread, with the
// processor kept busy after each start, most exits come that early.
func TestReaperWatchSeesAnEarlyExit(t *testing.T) {
	r := reaperWithoutSIGCHLD(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const n = 20
	exited := make(chan int, n)
	for i := range n {
		_, err := r.Start(func() (int, error) {
			return syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
		}, func(syscall.WaitStatus) { exited <- i })
		if err != nil {
			t.Fatal(err)
		}
		for spin := time.Now().Add(30 * time.Millisecond); time.Now().Before(spin); {
		}
	}
	deadline := time.After(time.Minute)
	for range n {
		select {
		case <-exited:
		case <-deadline:
			r.mu.Lock()
			left := len(r.owners)
			r.mu.Unlock()
			t.Fatalf("%d of %d children were not reaped without SIGCHLD", left, n)
		}
	}
}
