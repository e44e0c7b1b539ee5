package shim

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/agentpb"
)

const (
	stdoutIdx = 0
	stderrIdx = 1
)

// drainDelay is how long output is still collected after a process exits,
// for descendants that keep its pipes open; then the pipes are closed.
const drainDelay = 250 * time.Millisecond

// manager owns every process the shim started.
type manager struct {
	log       *slog.Logger
	reaper    *Reaper
	clock     Clock
	bufSize   int
	maxExited int

	mu       sync.Mutex
	procs    map[string]*process
	exitedBg []string // ids of exited background processes, oldest first
	seq      uint64
	closed   bool

	wg    sync.WaitGroup // the per-process goroutines
	abort chan struct{}  // closed by close: stop waiting for anything

	nonce string // unique to this manager, in every process's mark
}

func newManager(log *slog.Logger, r *Reaper, clock Clock, bufSize, maxExited int) *manager {
	return &manager{
		log: log, reaper: r, clock: clock, bufSize: bufSize, maxExited: maxExited,
		procs: make(map[string]*process),
		abort: make(chan struct{}),
		nonce: newNonce(),
	}
}

// mark is the environment entry that marks process id and its
// descendants: unique to this manager, so that two agents on one host (as
// in tests) never take each other's processes for their own.
func (m *manager) mark(id string) string { return markVar + "=" + m.nonce + "/" + id }

// process is one started process and its retained output.
type process struct {
	m         *manager
	id        string
	pid       int
	spec      *spawnSpec
	startedAt time.Time
	// spawned is the host's time a moment before the spawn, for the
	// sweep's skip (createdSince), which no test clock may move.
	spawned time.Time
	io      *stdio

	stdinMu sync.Mutex // guards io.stdin
	exitCh  chan struct{}
	// reading counts the output streams still collected; the collector
	// that ends the last closes outDone.
	reading atomic.Int32
	outDone chan struct{}

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	out      [2]*ring      // stdout, stderr (nil with a PTY)
	pinned   bool          // foreground: output waits for its follower
	pins     [2]int64      // the follower's offsets
	exited   bool
	status   syscall.WaitStatus
	exitedAt time.Time
	timedOut bool
	// oomAtStart is the sandbox's OOM kill count when it started (see
	// oomKills); oomKilled is set at its exit.
	oomAtStart int64
	oomKilled  bool
	signalled  bool // a client sent it SIGKILL
	done       bool // exited and all output collected
	released   bool // its Exec call ended
	timer      Timer
}

// start starts a process. A foreground process's output is pinned to its
// caller (backpressure) until release; a background one's only if its spec
// asks.
func (m *manager) start(spec *spawnSpec, timeout time.Duration) (*process, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, &rpcError{kind: kindUnavailable, reason: "shutting_down", msg: "the agent is shutting down"}
	}
	m.seq++
	id := "p-" + strconv.FormatUint(m.seq, 10)
	// Hold close's wait until this start has registered its goroutines.
	m.wg.Add(1)
	m.mu.Unlock()
	defer m.wg.Done()

	pathEnv := ""
	for _, kv := range spec.env {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			pathEnv = kv[5:]
		}
	}
	path, err := lookPath(spec.argv[0], pathEnv, spec.cwd)
	if err != nil {
		return nil, err
	}
	// Its descendants inherit the mark, so they can be found once it ends
	// (see sweep.go).
	spec.env = append(slices.DeleteFunc(slices.Clone(spec.env), func(kv string) bool {
		return len(kv) > len(markVar) && kv[:len(markVar)+1] == markVar+"="
	}), m.mark(id))
	p := &process{
		m:       m,
		id:      id,
		spec:    spec,
		changed: make(chan struct{}),
		exitCh:  make(chan struct{}),
		outDone: make(chan struct{}),
		pinned:  !spec.background || spec.pinned,
	}
	p.out[stdoutIdx] = newRing(m.bufSize)
	if spec.pty == nil {
		p.out[stderrIdx] = newRing(m.bufSize)
	}
	p.oomAtStart = oomKills()
	spawned := time.Now()
	pid, io, err := spawn(m.log, m.reaper, spec, path, p.onExit)
	if err != nil {
		return nil, err
	}
	p.pid, p.io, p.startedAt, p.spawned = pid, io, m.clock.Now(), spawned

	m.mu.Lock()
	m.procs[id] = p
	closed := m.closed
	m.mu.Unlock()
	if closed {
		p.kill(syscall.SIGKILL) // close ran meanwhile and did not see it
	}

	p.reading.Store(1)
	if io.stderr != nil {
		p.reading.Store(2)
	}
	m.wg.Go(func() { p.collect(stdoutIdx, io.stdout) })
	if io.stderr != nil {
		m.wg.Go(func() { p.collect(stderrIdx, io.stderr) })
	}
	if timeout > 0 {
		p.mu.Lock()
		p.timer = m.clock.AfterFunc(timeout, p.timeout)
		p.mu.Unlock()
	}
	m.wg.Go(p.wait)
	m.log.Debug("process started", "id", id, "pid", pid, "argv", spec.argv, "background", spec.background)
	return p, nil
}

// get returns the process with the given id.
func (m *manager) get(id string) (*process, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.procs[id]
	if !ok {
		return nil, errNotFound("process_not_found", id, "no process %q", id)
	}
	return p, nil
}

// list returns the processes ordered by start.
func (m *manager) list() []*process {
	m.mu.Lock()
	ps := make([]*process, 0, len(m.procs))
	for _, p := range m.procs {
		ps = append(ps, p)
	}
	m.mu.Unlock()
	slices.SortFunc(ps, func(a, b *process) int {
		x, _ := strconv.ParseUint(a.id[2:], 10, 64)
		y, _ := strconv.ParseUint(b.id[2:], 10, 64)
		return int(x) - int(y)
	})
	return ps
}

// release ends a process's Exec call. A foreground process that is still
// running is killed with its group, and forgotten once it is done.
func (m *manager) release(p *process) {
	p.mu.Lock()
	p.released = true
	p.pinned = false
	p.broadcastLocked()
	running := !p.exited
	done := p.done
	p.mu.Unlock()
	if p.spec.background {
		return
	}
	if running {
		p.kill(syscall.SIGKILL)
	}
	if done {
		m.forget(p)
	}
}

// finished is called once a process is done.
func (m *manager) finished(p *process) {
	if !p.spec.background {
		p.mu.Lock()
		released := p.released
		p.mu.Unlock()
		if released {
			m.forget(p)
		}
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.exitedBg = append(m.exitedBg, p.id)
	for len(m.exitedBg) > m.maxExited {
		delete(m.procs, m.exitedBg[0])
		m.exitedBg = m.exitedBg[1:]
	}
}

func (m *manager) forget(p *process) {
	m.mu.Lock()
	delete(m.procs, p.id)
	m.mu.Unlock()
}

// running returns the processes that have not exited.
func (m *manager) running() []*process {
	var out []*process
	for _, p := range m.list() {
		p.mu.Lock()
		if !p.exited {
			out = append(out, p)
		}
		p.mu.Unlock()
	}
	return out
}

// close kills every process, stops waiting for their output and joins the
// per-process goroutines. The reaper must still be running.
func (m *manager) close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.mu.Unlock()
	for _, p := range m.list() {
		p.kill(syscall.SIGKILL)
	}
	close(m.abort)
	m.wg.Wait()
}

// onExit records the process's wait status; it runs on the reaper goroutine.
func (p *process) onExit(ws syscall.WaitStatus) {
	p.mu.Lock()
	p.exited = true
	p.status = ws
	if ws.Signaled() && ws.Signal() == syscall.SIGKILL && !p.timedOut && !p.signalled && p.oomAtStart >= 0 {
		p.oomKilled = oomKills() > p.oomAtStart
	}
	p.exitedAt = p.m.clock.Now()
	p.broadcastLocked()
	p.mu.Unlock()
	close(p.exitCh)
}

func (p *process) timeout() {
	p.mu.Lock()
	if p.exited {
		p.mu.Unlock()
		return
	}
	p.timedOut = true
	p.mu.Unlock()
	p.m.log.Debug("process timed out", "id", p.id, "pid", p.pid)
	p.kill(syscall.SIGKILL)
}

// kill sends sig to the process group, even after the leader exited so that
// its descendants in the group get it too (the group id cannot be reused
// while any member lives). Once the process is done, its group id may be
// reused, so nothing is sent.
func (p *process) kill(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.signalled = p.signalled || sig == syscall.SIGKILL
		_ = syscall.Kill(-p.pid, sig)
	}
}

// signal sends sig to a running process (and its group unless processOnly).
func (p *process) signal(sig syscall.Signal, processOnly bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return errPrecondition("process_exited", p.id, "process %s has exited", p.id)
	}
	target := -p.pid
	if processOnly {
		target = p.pid
	}
	p.signalled = p.signalled || sig == syscall.SIGKILL
	if err := syscall.Kill(target, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return &rpcError{kind: kindInternal, reason: "signal_failed", subject: p.id, msg: "cannot signal the process", cause: err}
	}
	return nil
}

// writeStdin writes data to the process's stdin.
func (p *process) writeStdin(data []byte) (int, error) {
	// Not under stdinMu: a write may block until the process reads, and
	// closing stdin must still be possible meanwhile (it fails the write).
	p.stdinMu.Lock()
	f := p.io.stdin
	p.stdinMu.Unlock()
	if f == nil {
		return 0, errPrecondition("stdin_closed", p.id, "process %s has no open stdin", p.id)
	}
	n, err := f.Write(data)
	if err != nil {
		return n, errPrecondition("stdin_closed", p.id, "process %s no longer reads stdin", p.id)
	}
	return n, nil
}

// closeStdin closes stdin; on a PTY it sends end-of-file (^D) instead.
func (p *process) closeStdin() {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.io.stdin == nil {
		return
	}
	if p.io.master != nil {
		_, _ = p.io.master.Write([]byte{4})
		return
	}
	_ = p.io.stdin.Close()
	p.io.stdin = nil
}

func (p *process) resize(rows, cols uint32) error {
	if p.io.master == nil {
		return errPrecondition("not_a_terminal", p.id, "process %s has no terminal", p.id)
	}
	if rows == 0 || cols == 0 || rows > 0xffff || cols > 0xffff {
		return errInvalid("invalid_size", "terminal size %dx%d is out of range", rows, cols)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return errPrecondition("process_exited", p.id, "process %s has exited", p.id)
	}
	if err := setWinsize(p.io.master, ptySize{rows: uint16(rows), cols: uint16(cols)}); err != nil {
		if p.exited {
			// The master is closed once the process has exited and its
			// output drained; done is about to say so.
			return errPrecondition("process_exited", p.id, "process %s has exited", p.id)
		}
		return &rpcError{kind: kindInternal, reason: "resize_failed", subject: p.id, msg: "cannot resize the terminal", cause: err}
	}
	return nil
}

func (p *process) broadcastLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// readBufSize is the most one read of a process's output takes.
const readBufSize = 32 << 10

// readBufs keeps collect's read buffers between processes: two of
// readBufSize per process were most of what an exec of a quiet command
// allocated, and so most of what the agent's collector had to sweep.
var readBufs = sync.Pool{New: func() any { return new([readBufSize]byte) }}

// collect copies one output stream into its ring buffer until EOF. A
// pipe is closed then, so that wait finds nothing left to close; a PTY's
// master stays open for its input and its size until wait closes it.
func (p *process) collect(idx int, f *os.File) {
	defer func() {
		if p.io.master == nil {
			_ = f.Close()
		}
		if p.reading.Add(-1) == 0 {
			close(p.outDone)
		}
	}()
	pooled := readBufs.Get().(*[readBufSize]byte)
	defer readBufs.Put(pooled)
	buf := pooled[:min(readBufSize, p.m.bufSize)]
	for {
		n, err := f.Read(buf)
		if n > 0 {
			p.append(idx, buf[:n])
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) && !errors.Is(err, syscall.EIO) {
				p.m.log.Debug("output read failed", "id", p.id, "err", err)
			}
			break
		}
	}
	p.mu.Lock()
	p.out[idx].closed = true
	p.broadcastLocked()
	p.mu.Unlock()
}

// append adds output, waiting while a foreground process's follower is a
// full buffer behind.
func (p *process) append(idx int, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.pinned && p.out[idx].space(p.pins[idx]) < len(data) {
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-p.m.abort:
		}
		p.mu.Lock()
		select {
		case <-p.m.abort:
			p.pinned = false
		default:
		}
	}
	p.out[idx].write(data)
	p.broadcastLocked()
}

// wait runs once per process: it waits for the exit; for a foreground
// process it kills what the process left running (its group, and every
// process carrying its mark); it gives the output a moment to drain, then
// marks the process done — so a foreground Exec reports its exit only once
// nothing it started runs on.
func (p *process) wait() {
	select {
	case <-p.exitCh:
	case <-p.m.abort: // killed by close; its status may still come
	}
	p.mu.Lock()
	if p.timer != nil {
		p.timer.Stop()
	}
	exited := p.exited // else close aborted it, and it may run on
	p.mu.Unlock()
	if !p.spec.background {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL) // the group, while its id is still ours
		if exited && !createdSince(p.pid, p.spawned) {
			p.m.log.Debug("nothing was created since the process; no sweep", "id", p.id)
		} else if n := sweep(p.m.mark(p.id)); n > 0 {
			p.m.log.Debug("killed what a foreground process left running", "id", p.id, "count", n)
		}
	}

	select {
	case <-p.outDone: // drained already, as a quiet command's output mostly is
	default:
		drain := p.m.clock.AfterFunc(drainDelay, p.closeOutput)
		select {
		case <-p.outDone:
		case <-p.m.abort:
			p.closeOutput()
			<-p.outDone
		}
		drain.Stop()
	}
	p.closeOutput()

	p.stdinMu.Lock()
	if p.io.stdin != nil && p.io.master == nil {
		_ = p.io.stdin.Close()
	}
	p.io.stdin = nil
	p.stdinMu.Unlock()

	p.mu.Lock()
	p.done = true
	p.pinned = false
	p.broadcastLocked()
	p.mu.Unlock()
	p.m.log.Debug("process done", "id", p.id, "pid", p.pid)
	p.m.finished(p)
}

// closeOutput closes the parent's ends of the output pipes (or the PTY),
// ending the collectors.
func (p *process) closeOutput() {
	_ = p.io.stdout.Close()
	if p.io.stderr != nil {
		_ = p.io.stderr.Close()
	}
}

// info describes the process.
func (p *process) info() *agentpb.ProcessInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	pi := &agentpb.ProcessInfo{
		Id:                p.id,
		Pid:               int32(p.pid),
		Argv:              p.spec.argv,
		Cwd:               p.spec.cwd,
		Background:        p.spec.background,
		Pty:               p.spec.pty != nil,
		Running:           !p.exited,
		StartedAtUnixNano: p.startedAt.UnixNano(),
		StdoutBytes:       p.out[stdoutIdx].end,
	}
	if p.out[stderrIdx] != nil {
		pi.StderrBytes = p.out[stderrIdx].end
	}
	if p.exited {
		pi.Exited = p.exitedLocked()
	}
	return pi
}

func (p *process) exitedLocked() *agentpb.Exited {
	e := exitedMessage(p.status)
	e.TimedOut = p.timedOut
	e.OomKilled = p.oomKilled
	e.ExitedAtUnixNano = p.exitedAt.UnixNano()
	e.StdoutBytes = p.out[stdoutIdx].end
	if p.out[stderrIdx] != nil {
		e.StderrBytes = p.out[stderrIdx].end
	}
	return e
}

// oomKillFile holds the sandbox's OOM kill count: cgroup v2's
// memory.events, else v1's memory.oom_control. Every process's start
// reads the count, and reading the open file again from its start costs
// about 2 µs where opening it (and, on cgroup v1, failing to open v2's
// first) cost about 38.
var oomKillFile = keptFile{names: []string{"/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"}}

// oomKills is how many processes the kernel's OOM killer has killed in the
// sandbox's memory cgroup, or -1 where the agent cannot tell (gVisor has no
// such count: there the host's OOM killer ends the sandbox).
func oomKills() int64 {
	var buf [1024]byte // either file is a few lines
	n, ok := oomKillFile.read(buf[:])
	if !ok {
		return -1
	}
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}
