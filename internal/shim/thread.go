package shim

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Credentials and capabilities are per thread in Linux, so the agent acts
// as another account, or without its own capabilities, on a thread locked
// to the goroutine doing it. A thread so changed either gets back exactly
// the identity it had, checked, or is thrown away (a goroutine that ends
// locked to its thread takes the thread with it): nothing else ever runs
// with what was changed.
//
// Giving threads back matters beyond their cost. A thread thrown away is
// one the Go runtime must create again, and in a sandbox whose processes
// fill its pids limit the kernel refuses that; the runtime cannot survive
// a refused thread, so the agent, PID 1, would end with the sandbox. With
// threads kept, the runtime creates one only when the agent does more at
// once than it ever did, and a sandbox at its limit answers process_limit
// call after call (TestProcessLimitSaysWhatToDo).

// onThread runs fn on an OS thread of its own, prepared by setup. After
// fn, restore (nil: none) is asked to bring the thread back to the
// identity it had before setup; only if it did is the thread given back
// to the runtime. A panic in fn is fn's error (an internal one), not the
// agent's end: no handler of the runtime's catches it on this goroutine.
func onThread(setup func() error, restore func(before threadIdentity) error, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		before, err := currentThreadIdentity()
		if err != nil {
			runtime.UnlockOSThread() // nothing was changed
			errc <- err
			return
		}
		if err = setup(); err == nil {
			err = callRecovered(fn)
		}
		// A setup that failed halfway is restored the same way.
		if restore != nil && restore(before) == nil {
			if after, aerr := currentThreadIdentity(); aerr == nil && after.equal(before) {
				runtime.UnlockOSThread()
			}
		}
		errc <- err
	}()
	return <-errc
}

// callRecovered calls fn, returning a panic as an error.
func callRecovered(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return fn()
}

// threadIdentity is what a thread acts with: its ids, its file-system
// ids (where the kernel has them), its supplementary groups, its
// capabilities and its no-new-privileges flag.
type threadIdentity struct {
	ruid, euid, suid int
	rgid, egid, sgid int
	fsuid, fsgid     int // -1 where the kernel lacks them (gVisor)
	groups           []int
	caps             [2]unix.CapUserData
	noNewPrivs       int
}

// currentThreadIdentity reads the calling thread's identity; the caller
// is locked to its thread. Every read is a system call on that thread.
func currentThreadIdentity() (threadIdentity, error) {
	var id threadIdentity
	id.ruid, id.euid, id.suid = unix.Getresuid()
	id.rgid, id.egid, id.sgid = unix.Getresgid()
	id.fsuid, id.fsgid = -1, -1
	if haveFileIDs() {
		// Asking for an invalid id (-1) changes nothing and answers the
		// current one.
		gid, _, _ := syscall.RawSyscall(syscall.SYS_SETFSGID, ^uintptr(0), 0, 0)
		uid, _, _ := syscall.RawSyscall(syscall.SYS_SETFSUID, ^uintptr(0), 0, 0)
		id.fsuid, id.fsgid = int(uint32(uid)), int(uint32(gid))
	}
	groups, err := syscall.Getgroups()
	if err != nil {
		return id, fmt.Errorf("getgroups: %w", err)
	}
	id.groups = groups
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	if err := unix.Capget(&hdr, &id.caps[0]); err != nil {
		return id, fmt.Errorf("capget: %w", err)
	}
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		return id, fmt.Errorf("no_new_privs: %w", err)
	}
	id.noNewPrivs = nnp
	return id, nil
}

func (a threadIdentity) equal(b threadIdentity) bool {
	return a.ruid == b.ruid && a.euid == b.euid && a.suid == b.suid &&
		a.rgid == b.rgid && a.egid == b.egid && a.sgid == b.sgid &&
		a.fsuid == b.fsuid && a.fsgid == b.fsgid &&
		slices.Equal(a.groups, b.groups) && a.caps == b.caps && a.noNewPrivs == b.noNewPrivs
}

// restoreThread brings the calling thread back to before after a switch
// of its effective or file-system ids (setFileIDs, setEffectiveIDs); its
// real and saved ids were never changed. The effective uid first: going
// back to root brings the permitted capabilities back into effect, so
// that the gid and the groups may be set. onThread checks the result.
func restoreThread(before threadIdentity) error {
	if err := setEffectiveID(syscall.SYS_SETRESUID, before.euid); err != nil {
		return err
	}
	if err := setEffectiveID(syscall.SYS_SETRESGID, before.egid); err != nil {
		return err
	}
	groups := make([]uint32, len(before.groups))
	for i, g := range before.groups {
		groups[i] = uint32(g)
	}
	var p uintptr
	if len(groups) > 0 {
		p = uintptr(unsafe.Pointer(&groups[0]))
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, uintptr(len(groups)), p, 0); e != 0 {
		return e
	}
	if before.fsuid >= 0 {
		syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(before.fsgid), 0, 0)
		syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(before.fsuid), 0, 0)
	}
	// Leaving root's fs or effective uid cleared capabilities from the
	// effective set; coming back raised those permitted. Set them as
	// they were, exactly.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	caps := before.caps
	return unix.Capset(&hdr, &caps[0])
}

// A dedicatedThread runs calls, one at a time, on one thread prepared
// once by setup, whose change cannot be undone (dropAgentCaps drops
// permitted capabilities): the thread serves until close instead of being
// thrown away after each call.
type dedicatedThread struct {
	setup func() error
	once  sync.Once
	calls chan func()
	quit  chan struct{}
	ended chan struct{} // closed when the thread's goroutine returns
	err   error         // from setup: every call fails with it
}

func newDedicatedThread(setup func() error) *dedicatedThread {
	return &dedicatedThread{setup: setup, calls: make(chan func()), quit: make(chan struct{}), ended: make(chan struct{})}
}

func (d *dedicatedThread) start() {
	ready := make(chan error)
	go func() {
		defer close(d.ended)
		runtime.LockOSThread() // never unlocked
		if err := d.setup(); err != nil {
			ready <- err
			return // the thread, half prepared, ends with the goroutine
		}
		ready <- nil
		for {
			select {
			case call := <-d.calls:
				call()
			case <-d.quit:
				return
			}
		}
	}()
	if err := <-ready; err != nil {
		d.err = fmt.Errorf("preparing a thread: %w", err)
	}
}

// do runs fn on d's thread. A panic in fn is fn's error.
func (d *dedicatedThread) do(fn func() error) error {
	d.once.Do(d.start)
	if d.err != nil {
		return d.err
	}
	errc := make(chan error, 1)
	select {
	case d.calls <- func() { errc <- callRecovered(fn) }:
	case <-d.quit:
		return errShuttingDown
	}
	return <-errc
}

// close ends d's thread, once a call running on it returns.
func (d *dedicatedThread) close() {
	started := true
	d.once.Do(func() { started = false })
	close(d.quit)
	if started {
		<-d.ended
	}
}

// reserveThreads makes the Go runtime hold at least n OS threads: n
// goroutines each lock a thread of their own at once, then let it go,
// and the runtime keeps what it made (it ends a thread only with a
// goroutine locked to it). Run once, as the agent starts, before the
// sandbox's processes can fill its pids limit (see agentpb.AgentThreads).
func reserveThreads(n int) {
	var locked sync.WaitGroup
	release := make(chan struct{})
	for range n {
		locked.Add(1)
		go func() {
			runtime.LockOSThread()
			locked.Done()
			<-release
			runtime.UnlockOSThread()
		}()
	}
	locked.Wait()
	close(release)
}
