package agentconn_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestRun(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	cwd := t.TempDir()
	bigIn := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	tests := []struct {
		name       string
		req        agentconn.ExecRequest
		wantOut    string
		wantErr    string
		wantCode   int
		wantSignal string
	}{
		{name: "exit zero", req: agentconn.ExecRequest{Argv: []string{"true"}}},
		{name: "exit code", req: agentconn.ExecRequest{Argv: []string{"sh", "-c", "exit 42"}}, wantCode: 42},
		{
			name:    "stdout and stderr",
			req:     agentconn.ExecRequest{Argv: []string{"sh", "-c", "echo out; echo err >&2"}},
			wantOut: "out\n", wantErr: "err\n",
		},
		{
			name:     "killed by signal",
			req:      agentconn.ExecRequest{Argv: []string{"sh", "-c", "kill -KILL $$"}},
			wantCode: -1, wantSignal: "SIGKILL",
		},
		{
			name:    "env",
			req:     agentconn.ExecRequest{Argv: []string{"sh", "-c", `echo "$PADDOCK_X"`}, Env: map[string]string{"PADDOCK_X": "y z"}},
			wantOut: "y z\n",
		},
		{
			// Only the agent's mark on its processes stays (see
			// internal/shim/sweep.go).
			name: "clear env",
			req: agentconn.ExecRequest{
				Argv: []string{"/usr/bin/env", "-u", "PADDOCK_PROCESS", "/usr/bin/env"}, ClearEnv: true, Env: map[string]string{"ONLY": "1"},
			},
			wantOut: "ONLY=1\n",
		},
		{name: "cwd", req: agentconn.ExecRequest{Argv: []string{"pwd"}, Cwd: cwd}, wantOut: cwd + "\n"},
		{
			name:    "stdin",
			req:     agentconn.ExecRequest{Argv: []string{"cat"}, Stdin: strings.NewReader("from stdin")},
			wantOut: "from stdin",
		},
		{
			name:    "large stdin",
			req:     agentconn.ExecRequest{Argv: []string{"cat"}, Stdin: bytes.NewReader(bigIn)},
			wantOut: string(bigIn),
		},
		{name: "no stdin reads EOF", req: agentconn.ExecRequest{Argv: []string{"cat"}}},
		{
			name:    "relative command in cwd",
			req:     agentconn.ExecRequest{Argv: []string{"./script.sh"}, Cwd: cwd},
			wantOut: "script\n",
		},
	}
	if err := os.WriteFile(cwd+"/script.sh", []byte("#!/bin/sh\necho script\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := a.client.Run(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Stdout) != tt.wantOut || string(res.Stderr) != tt.wantErr {
				t.Errorf("stdout %.80q stderr %.80q, want %.80q and %.80q", res.Stdout, res.Stderr, tt.wantOut, tt.wantErr)
			}
			if res.Exit.Code != tt.wantCode || res.Exit.Signal != tt.wantSignal {
				t.Errorf("exit %+v, want code %d signal %q", res.Exit, tt.wantCode, tt.wantSignal)
			}
			if res.Exit.StdoutBytes != int64(len(tt.wantOut)) {
				t.Errorf("StdoutBytes %d, want %d", res.Exit.StdoutBytes, len(tt.wantOut))
			}
		})
	}
}

func TestExecRefused(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/data.txt", []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  agentconn.ExecRequest
		kind error
		code string
	}{
		{"missing command", agentconn.ExecRequest{Argv: []string{"paddock-no-such-command"}}, errdefs.ErrNotFound, "command_not_found"},
		{"missing path", agentconn.ExecRequest{Argv: []string{"/no/such/program"}}, errdefs.ErrNotFound, "command_not_found"},
		{"not executable", agentconn.ExecRequest{Argv: []string{dir + "/data.txt"}}, errdefs.ErrPermissionDenied, "command_not_executable"},
		{"directory", agentconn.ExecRequest{Argv: []string{dir}}, errdefs.ErrPermissionDenied, "command_not_executable"},
		{"empty argv", agentconn.ExecRequest{}, errdefs.ErrInvalidArgument, "invalid_command"},
		{"empty argv0", agentconn.ExecRequest{Argv: []string{""}}, errdefs.ErrInvalidArgument, "invalid_command"},
		{"NUL in argv", agentconn.ExecRequest{Argv: []string{"echo", "a\x00b"}}, errdefs.ErrInvalidArgument, "invalid_command"},
		{"missing cwd", agentconn.ExecRequest{Argv: []string{"true"}, Cwd: dir + "/nope"}, errdefs.ErrInvalidArgument, "invalid_cwd"},
		{"relative cwd", agentconn.ExecRequest{Argv: []string{"true"}, Cwd: "tmp"}, errdefs.ErrInvalidArgument, "invalid_cwd"},
		{"cwd is a file", agentconn.ExecRequest{Argv: []string{"true"}, Cwd: dir + "/data.txt"}, errdefs.ErrInvalidArgument, "invalid_cwd"},
		{"bad env", agentconn.ExecRequest{Argv: []string{"true"}, Env: map[string]string{"A=B": "c"}}, errdefs.ErrInvalidArgument, "invalid_env"},
		{"negative timeout", agentconn.ExecRequest{Argv: []string{"true"}, Timeout: -time.Second}, errdefs.ErrInvalidArgument, "invalid_timeout"},
		{"pty too big", agentconn.ExecRequest{Argv: []string{"true"}, PTY: &agentconn.PTY{Rows: 1 << 20}}, errdefs.ErrInvalidArgument, "invalid_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := a.client.Exec(ctx, tt.req)
			if err == nil {
				es.Close()
			}
			wantCode(t, err, tt.kind, tt.code)
		})
	}
}

// TestExecStreams checks that output arrives as it is produced and stdin
// can be written interactively.
func TestExecStreams(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	es, err := a.client.Exec(ctx, agentconn.ExecRequest{Argv: []string{"cat"}, OpenStdin: true})
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	var off int64
	for i := range 3 {
		line := fmt.Sprintf("line %d\n", i)
		if _, err := es.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		ev, err := es.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Stream != agentconn.Stdout || string(ev.Data) != line || ev.Offset != off {
			t.Fatalf("event %+v, want stdout %q at %d", ev, line, off)
		}
		off += int64(len(line))
	}
	if err := es.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	st, err := es.Wait(nil, nil)
	if err != nil || st.Code != 0 {
		t.Fatalf("wait: %+v, %v", st, err)
	}
}

func TestSignal(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)

	t.Run("through the stream", func(t *testing.T) {
		es, err := a.client.Exec(ctx, agentconn.ExecRequest{
			Argv:      []string{"sh", "-c", `trap 'echo got TERM; exit 7' TERM; echo ready; read x`},
			OpenStdin: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer es.Close()
		if ev, err := es.Recv(); err != nil || string(ev.Data) != "ready\n" {
			t.Fatalf("got %+v, %v", ev, err)
		}
		if err := es.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		st, err := es.Wait(&out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Code != 7 || out.String() != "got TERM\n" {
			t.Fatalf("exit %+v output %q", st, out.String())
		}
	})

	t.Run("by id", func(t *testing.T) {
		es, err := a.client.Exec(ctx, agentconn.ExecRequest{Argv: []string{"sleep", "1000"}})
		if err != nil {
			t.Fatal(err)
		}
		defer es.Close()
		if err := a.client.Signal(ctx, es.ID(), syscall.SIGUSR1, false); err != nil {
			t.Fatal(err)
		}
		st, err := es.Wait(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Code != -1 || st.Signal != "SIGUSR1" {
			t.Fatalf("exit %+v, want SIGUSR1", st)
		}
	})

	t.Run("refused", func(t *testing.T) {
		wantCode(t, a.client.Signal(ctx, "p-999999", syscall.SIGTERM, false), errdefs.ErrNotFound, "process_not_found")
		wantCode(t, a.client.Signal(ctx, "p-1", syscall.SIGSEGV, false), errdefs.ErrInvalidArgument, "invalid_signal")
	})
}

// fakeClock fires timers when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	added  chan struct{}
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_800_000_000, 0), added: make(chan struct{}, 100)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) shim.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	select {
	case c.added <- struct{}{}:
	default:
	}
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// Advance moves time on and runs the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

func TestTimeout(t *testing.T) {
	clock := newFakeClock()
	a := startAgent(t, shim.Options{Clock: clock})
	ctx := ctxT(t)
	// The shell starts a grandchild in the same group and reports its pid.
	es, err := a.client.Exec(ctx, agentconn.ExecRequest{
		Argv:    []string{"sh", "-c", "sleep 1000 & echo $!; wait"},
		Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	ev, err := es.Recv()
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(ev.Data)))
	if err != nil {
		t.Fatalf("grandchild pid %q: %v", ev.Data, err)
	}
	clock.Advance(59 * time.Second)
	if err := syscall.Kill(es.PID(), 0); err != nil {
		t.Fatalf("process gone before its timeout: %v", err)
	}
	clock.Advance(time.Second)
	st, err := es.Wait(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !st.TimedOut || st.Signal != "SIGKILL" {
		t.Fatalf("exit %+v, want timed out by SIGKILL", st)
	}
	waitGone(t, grandchild)
}

// waitGone polls until pid no longer exists (reaped, not a zombie).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	testenv.Eventually(t, func() error {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return nil
		}
		state, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return fmt.Errorf("process %d still exists: %s", pid, state)
	})
}

func TestBackgroundAttach(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	es, err := a.client.Exec(ctx, agentconn.ExecRequest{
		Argv:       []string{"sh", "-c", "echo one; read x; echo two $x; echo err >&2"},
		OpenStdin:  true,
		Background: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	id := es.ID()
	if ev, err := es.Recv(); err != nil || string(ev.Data) != "one\n" {
		t.Fatalf("got %+v, %v", ev, err)
	}
	// Disconnect: the process keeps running.
	es.Close()
	a.client.Close()

	other := agentconn.New(testenv.UnixDialer(a.socket))
	defer other.Close()
	ps, err := other.Processes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range ps {
		if p.ID == id {
			found = true
			if !p.Running || !p.Background || p.Offsets.Stdout != 4 {
				t.Fatalf("process %+v, want running background with 4 bytes out", p)
			}
		}
	}
	if !found {
		t.Fatalf("process %s not listed in %+v", id, ps)
	}

	// Follow it from the start on the new connection, then let it finish.
	att, err := other.Attach(ctx, id, agentconn.Offsets{})
	if err != nil {
		t.Fatal(err)
	}
	defer att.Close()
	if n, err := other.WriteStdin(ctx, id, strings.NewReader("go\n"), true); err != nil || n != 3 {
		t.Fatalf("write stdin: %d, %v", n, err)
	}
	var out, errOut bytes.Buffer
	st, err := att.Wait(&out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "one\ntwo go\n" || errOut.String() != "err\n" || st.Code != 0 {
		t.Fatalf("attach: out %q err %q exit %+v", out.String(), errOut.String(), st)
	}

	// Replay from offsets after it exited.
	tests := []struct {
		name         string
		from         agentconn.Offsets
		out, errText string
	}{
		{"from start", agentconn.Offsets{}, "one\ntwo go\n", "err\n"},
		{"from offsets", agentconn.Offsets{Stdout: 4, Stderr: 3}, "two go\n", "\n"},
		{"past the end", agentconn.Offsets{Stdout: 100, Stderr: 100}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			att, err := other.Attach(ctx, id, tt.from)
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			st, err := att.Wait(&out, &errOut)
			if err != nil || st.Code != 0 {
				t.Fatalf("wait: %+v %v", st, err)
			}
			if out.String() != tt.out || errOut.String() != tt.errText {
				t.Fatalf("out %q err %q, want %q %q", out.String(), errOut.String(), tt.out, tt.errText)
			}
		})
	}

	_, err = other.Attach(ctx, "p-999999", agentconn.Offsets{})
	wantCode(t, err, errdefs.ErrNotFound, "process_not_found")
	_, err = other.Attach(ctx, id, agentconn.Offsets{Stdout: -1})
	wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_offset")
}

// numberedLines is what the overflow test's command prints: n lines of 100
// bytes each.
func numberedLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%099d\n", i)
	}
	return b.String()
}

const printLines = `i=0; while [ $i -lt %d ]; do printf '%%099d\n' $i; i=$((i+1)); done`

func TestOverflow(t *testing.T) {
	const bufSize = 4096
	a := startAgent(t, shim.Options{OutputBuffer: bufSize})
	ctx := ctxT(t)
	want := numberedLines(100) // 10000 bytes

	t.Run("background drops the oldest", func(t *testing.T) {
		es, err := a.client.Exec(ctx, agentconn.ExecRequest{
			Argv:       []string{"sh", "-c", fmt.Sprintf(printLines, 100)},
			Background: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		id := es.ID()
		es.Close()
		waitExited(t, a.client, id)

		tests := []struct {
			name     string
			from     int64
			wantLost int64
		}{
			{"from the start", 0, int64(len(want) - bufSize)},
			{"from a lost offset", 1000, int64(len(want) - bufSize - 1000)},
			{"from a kept offset", 8000, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				att, err := a.client.Attach(ctx, id, agentconn.Offsets{Stdout: tt.from})
				if err != nil {
					t.Fatal(err)
				}
				defer att.Close()
				var got bytes.Buffer
				next := tt.from
				for {
					ev, err := att.Recv()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if ev.Exit != nil {
						continue
					}
					if ev.Offset != next {
						t.Fatalf("event at %d, want %d", ev.Offset, next)
					}
					next += ev.Lost + int64(len(ev.Data))
					got.Write(ev.Data)
				}
				if lost, _ := att.Lost(); lost != tt.wantLost {
					t.Errorf("lost %d, want %d", lost, tt.wantLost)
				}
				if got.String() != want[tt.from+tt.wantLost:] {
					t.Errorf("got %d bytes, want the last %d", got.Len(), len(want)-int(tt.from+tt.wantLost))
				}
			})
		}
	})

	t.Run("foreground applies backpressure", func(t *testing.T) {
		big := numberedLines(2000) // 200 KB through a 4 KiB buffer
		res, err := a.client.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", fmt.Sprintf(printLines, 2000)}})
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Stdout) != big {
			t.Fatalf("got %d bytes, want %d intact", len(res.Stdout), len(big))
		}
	})
}

// waitExited polls until the process has exited.
func waitExited(t *testing.T, c *agentconn.Client, id string) agentconn.ProcessInfo {
	t.Helper()
	var exited agentconn.ProcessInfo
	testenv.Eventually(t, func() error {
		ps, err := c.Processes(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.ID == id && !p.Running {
				exited = p
				return nil
			}
		}
		return fmt.Errorf("process %s did not exit: %+v", id, ps)
	})
	return exited
}

func TestProcesses(t *testing.T) {
	a := startAgent(t, shim.Options{MaxExited: 2})
	ctx := ctxT(t)
	var ids []string
	for i := range 3 {
		es, err := a.client.Exec(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", fmt.Sprintf("exit %d", i)}, Background: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := es.Wait(nil, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, es.ID())
	}
	fg, err := a.client.Exec(ctx, agentconn.ExecRequest{Argv: []string{"sleep", "1000"}, Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	defer fg.Close()
	// The agent forgets the oldest exited process once it has recorded the
	// third's exit, which it may do just after the client saw that exit.
	got := map[string]agentconn.ProcessInfo{}
	testenv.Eventually(t, func() error {
		ps, err := a.client.Processes(ctx)
		if err != nil {
			return err
		}
		clear(got)
		for _, p := range ps {
			got[p.ID] = p
		}
		if _, ok := got[ids[0]]; ok {
			return fmt.Errorf("oldest exited process %s still listed", ids[0])
		}
		return nil
	})
	for i, id := range ids[1:] {
		p, ok := got[id]
		if !ok || p.Running || p.Exit == nil || p.Exit.Code != i+1 {
			t.Errorf("process %s: %+v, want exited with %d", id, p, i+1)
		}
	}
	p, ok := got[fg.ID()]
	if !ok || !p.Running || p.Background || p.PID != fg.PID() || p.Cwd != "/" || strings.Join(p.Argv, " ") != "sleep 1000" {
		t.Errorf("foreground process: %+v", p)
	}
}
