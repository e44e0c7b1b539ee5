package shim

import (
	"log/slog"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// TestReaperWatchesItsChildren: a child the reaper started is reaped
// when it exits even with no SIGCHLD coming (its pidfd wakes the reaper),
// so an exec's end does not wait on the signal's way through the runtime.
func TestReaperWatchesItsChildren(t *testing.T) {
	r, err := StartReaper(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	signal.Stop(r.sigc) // from here on, only the watch can reap
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
