package shim

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What a foreground process leaves behind. The shim is the sandbox's PID 1:
// a process that left its group (setsid, a double fork, a daemon) is
// reparented to it and would outlive the Exec that started it, holding the
// PID limit and the CPU. So every process the shim starts carries an
// environment mark naming it, which its descendants inherit, and when a
// foreground process ends, whatever still carries its mark is killed.
// Background processes are the deliberate exception; KillAll takes
// everything but the agent.

// markVar is the environment variable that names the process a sandbox
// process descends from.
const markVar = "PADDOCK_PROCESS"

// Bounds of one sweep: a fork bomb is stopped and killed in rounds, each a
// scan of /proc.
const (
	sweepRounds = 200
	sweepFor    = 5 * time.Second
)

// newNonce returns 8 random hex digits.
func newNonce() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sweep kills every process whose environment carries mark, and returns
// how many it killed. It first stops them (a stopped process cannot fork),
// scanning again until no new one appears, then kills them all, and scans
// until none is left.
func sweep(mark string) int {
	deadline := time.Now().Add(sweepFor)
	stopped := map[int]bool{}
	for range sweepRounds {
		fresh := 0
		for _, pid := range marked(mark) {
			if !stopped[pid] {
				_ = syscall.Kill(pid, syscall.SIGSTOP)
				stopped[pid] = true
				fresh++
			}
		}
		if fresh == 0 || time.Now().After(deadline) {
			break
		}
	}
	for pid := range stopped {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	killed := len(stopped)
	for range sweepRounds {
		left := marked(mark)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if !stopped[pid] {
				stopped[pid] = true
				killed++
			}
		}
	}
	return killed
}

// A foreground process that ended before anything else was created in
// the sandbox's PID namespace left nothing behind: every process it could
// have started, and every one those started, took a PID after its own. The
// kernel says which PID it handed out last in the reader's namespace
// (ns_last_pid; gVisor has none), so wait skips the sweep, a scan of
// /proc, when that is still the process's own once it was reaped (one the
// agent's close cut short may still run). PIDs are handed out in a cycle
// (up to pid_max, 32768 by default), so the last one could come round to
// the process's again after it was reaped; that takes as many forks as
// the cycle is long, which no sandbox makes within quietFor of a
// process's start. Past quietFor the sweep always runs.
var lastPIDFile = keptFile{names: []string{"/proc/sys/kernel/ns_last_pid"}}

// quietFor bounds the life of a process whose sweep may be skipped (a
// variable for tests, which must not depend on the machine's speed).
var quietFor = 5 * time.Millisecond

// createdSince reports whether a process or thread may have been created
// in this PID namespace since pid was: true unless the kernel's last PID
// is still pid and less than quietFor has passed since spawned, a moment
// before pid was spawned.
func createdSince(pid int, spawned time.Time) bool {
	if time.Since(spawned) >= quietFor {
		return true
	}
	last, ok := lastPID()
	return !ok || last != pid || time.Since(spawned) >= quietFor
}

// lastPID reads the last PID the kernel handed out in this namespace.
func lastPID() (int, bool) {
	var b [24]byte
	n, ok := lastPIDFile.read(b[:])
	if !ok || n <= 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid, err == nil
}

// marked lists the live processes whose environment carries mark, the
// shim excepted.
func marked(mark string) []int {
	want := []byte("\x00" + mark + "\x00")
	self := os.Getpid()
	var out []int
	for _, pid := range pids() {
		if pid == self {
			continue
		}
		env := environOf(pid)
		if len(env) == 0 {
			continue
		}
		env = append(append([]byte{0}, env...), 0)
		if bytes.Contains(env, want) {
			out = append(out, pid)
		}
	}
	return out
}

// Retries of an environment that reads empty.
const (
	emptyEnvRetries = 10
	emptyEnvWait    = 2 * time.Millisecond
)

// environOf reads a process's environment. It reads empty for a zombie,
// a kernel thread, a process that cleared its own, and for a moment while
// a process execs (its new memory has no environment yet): an orphan that
// a foreground process forked just before it ended may be there. So an
// empty one is read again a few times when the process is the shim's own
// live child (orphans are reparented to it) — nothing else pays for it.
func environOf(pid int) []byte {
	path := "/proc/" + strconv.Itoa(pid) + "/environ"
	self := os.Getpid()
	for i := 0; ; i++ {
		var env []byte
		_ = asProcessOwner(pid, true, func() (err error) {
			env, err = os.ReadFile(path)
			return err
		})
		if len(env) > 0 || i == emptyEnvRetries {
			return env
		}
		if state, ppid := statOf(pid); state == 'Z' || state == 0 || ppid != self {
			return env
		}
		time.Sleep(emptyEnvWait)
	}
}

// pids lists the processes in /proc.
func pids() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// killAll kills every process but the shim and returns how many there
// were. As the sandbox's PID 1 one kill(-1) reaches all of them at once
// (the kernel holds forks off while it walks them); outside a sandbox (in
// tests) only the processes the shim started and what carries their marks
// are killed.
func (s *Server) killAll() int {
	if os.Getpid() == 1 {
		// What kill(-1) ends was killed, not out of memory (see onExit).
		for _, p := range s.procs.list() {
			p.mu.Lock()
			p.signalled = true
			p.mu.Unlock()
		}
		n := 0
		for _, pid := range pids() {
			if pid != 1 && !zombie(pid) {
				n++
			}
		}
		for range 3 { // until nothing is left to signal
			if err := syscall.Kill(-1, syscall.SIGKILL); err != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return n
	}
	n := 0
	for _, p := range s.procs.list() {
		p.mu.Lock()
		exited := p.exited
		p.mu.Unlock()
		if !exited {
			p.kill(syscall.SIGKILL)
			n++
		}
		n += sweep(s.procs.mark(p.id))
	}
	return n
}

// zombie reports whether pid has exited and awaits its reaper.
func zombie(pid int) bool {
	state, _ := statOf(pid)
	return state == 0 || state == 'Z'
}

// statOf reads a process's state letter and parent from /proc/PID/stat; a
// process that is gone has state 0.
func statOf(pid int) (state byte, ppid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0
	}
	fields := bytes.Fields(b[i+2:])
	if len(fields) < 2 {
		return 0, 0
	}
	ppid, _ = strconv.Atoi(string(fields[1]))
	return fields[0][0], ppid
}
