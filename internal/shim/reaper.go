package shim

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Reaper is the one place that waits for child processes.
//
// As PID 1 (or a child subreaper) the shim inherits every orphaned process
// in the sandbox, and must wait for them or they stay zombies. Waiting for
// any child (wait4(-1)) would race any other code that waits for its own
// children, so the shim starts every process itself through Reaper.Start and
// never waits anywhere else: the reaper goroutine waits for all children and
// hands each exit status to the process's owner by pid; children nobody
// owns (re-parented orphans) are reaped and forgotten.
//
// A process may run only one Reaper at a time. Code in the same process must
// not start and wait for children by other means (os/exec) while it runs.
type Reaper struct {
	log        *slog.Logger
	subreaper  bool
	mu         sync.Mutex // held while starting a child and while reaping
	owners     map[int]func(syscall.WaitStatus)
	orphans    atomic.Int64
	sigc       chan os.Signal
	stop, done chan struct{}

	// The pidfds of the children being watched (see watch), and their
	// goroutines; noPidfd once pidfds turned out not to work here.
	watches  map[*os.File]struct{}
	noPidfd  bool
	stopping bool // Stop began: no new watch
	wg       sync.WaitGroup

	// capless is the thread root's processes are forked on, without the
	// agent's own capabilities (see forkExec and dropAgentCaps).
	capless *dedicatedThread
}

var reaperRunning atomic.Bool

// StartReaper starts the reaper goroutine. When the calling process is not
// PID 1 it makes itself a child subreaper (PR_SET_CHILD_SUBREAPER) so that
// orphans of its descendants come to it, exactly as they would to an init.
func StartReaper(log *slog.Logger) (*Reaper, error) {
	if !reaperRunning.CompareAndSwap(false, true) {
		return nil, errors.New("shim: a reaper is already running in this process")
	}
	r := &Reaper{
		log:     log,
		owners:  make(map[int]func(syscall.WaitStatus)),
		watches: make(map[*os.File]struct{}),
		sigc:    make(chan os.Signal, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		capless: newDedicatedThread(dropAgentCaps),
	}
	if os.Getpid() != 1 {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			reaperRunning.Store(false)
			return nil, fmt.Errorf("shim: become child subreaper: %w", err)
		}
		r.subreaper = true
	}
	signal.Notify(r.sigc, syscall.SIGCHLD)
	go r.loop()
	return r, nil
}

// Stop stops the reaper goroutine and waits for it. Children still running
// afterwards are no longer waited for.
func (r *Reaper) Stop() {
	select {
	case <-r.stop:
		<-r.done
		return
	default:
	}
	close(r.stop)
	<-r.done
	r.mu.Lock()
	r.stopping = true
	for f := range r.watches {
		_ = f.Close() // ends its goroutine's wait
	}
	r.mu.Unlock()
	r.wg.Wait()
	r.capless.close()
	signal.Stop(r.sigc)
	if r.subreaper {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	}
	reaperRunning.Store(false)
}

// Orphans returns how many children nobody owned have been reaped.
func (r *Reaper) Orphans() int64 { return r.orphans.Load() }

// Start runs start, which must create exactly one child process and return
// its pid, and registers onExit to receive that child's wait status. onExit
// runs while the reaper reaps (on its goroutine, or on the child's watch)
// and must not block or call back into r.
func (r *Reaper) Start(start func() (int, error), onExit func(syscall.WaitStatus)) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, err := start()
	if err != nil {
		return 0, err
	}
	r.owners[pid] = onExit
	r.watch(pid)
	return pid, nil
}

// watch reaps pid as soon as it exits: the kernel makes its pidfd
// readable, which wakes the poller directly, where SIGCHLD first goes
// through the runtime's signal goroutine and then the loop's. It is called
// with mu held, so pid cannot have been reaped (and its number reused)
// yet. Where pidfds cannot be opened or polled (older kernels, some
// sandboxes), SIGCHLD alone reaps, as it always does for orphans.
func (r *Reaper) watch(pid int) {
	if r.noPidfd || r.stopping {
		return
	}
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		switch {
		case errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.EPERM):
			r.noPidfd = true // not here: SIGCHLD alone, from now on
		}
		return // gone already, or out of descriptors for now: SIGCHLD reaps it
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	if f.SetReadDeadline(time.Time{}) != nil { // not pollable
		r.noPidfd = true
		_ = f.Close()
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return
	}
	r.watches[f] = struct{}{}
	r.wg.Go(func() {
		// The poller is edge-triggered, and Read forgets a readiness it
		// saw before it began: so each call looks at the pidfd itself
		// and waits only while the process runs.
		err := rc.Read(func(fd uintptr) bool {
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
			return n > 0 || (err != nil && !errors.Is(err, syscall.EINTR))
		})
		r.mu.Lock()
		delete(r.watches, f)
		r.mu.Unlock()
		_ = f.Close()
		if err == nil {
			r.reap()
		}
	})
}

func (r *Reaper) loop() {
	defer close(r.done)
	r.reap()
	for {
		select {
		case <-r.stop:
			r.reap()
			return
		case <-r.sigc:
			r.reap()
		}
	}
}

// reap waits for every child that has exited, without blocking.
func (r *Reaper) reap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return // ECHILD: no children; 0: none exited yet
		}
		if !ws.Exited() && !ws.Signaled() {
			continue
		}
		if onExit, ok := r.owners[pid]; ok {
			delete(r.owners, pid)
			onExit(ws)
			continue
		}
		r.orphans.Add(1)
		r.log.Debug("reaped orphan", "pid", pid, "status", int(ws))
	}
}
