package shim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	procpb "github.com/paddockhq/paddock/internal/agentpb/envd/process"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestEnvdList(t *testing.T) {
	a := startEnvdAgent(t, Options{})
	ctx := t.Context()
	var pids []uint32
	for _, tag := range []string{"one", ""} {
		req := &procpb.StartRequest{Process: &procpb.ProcessConfig{
			Cmd: "/bin/bash", Args: []string{"-c", "echo up; read -r"}, Envs: map[string]string{"K": tag}, Cwd: new("/"),
		}, Stdin: new(true)}
		if tag != "" {
			req.Tag = new(tag)
		}
		s, err := a.c.Start(ctx, connect.NewRequest(req))
		if err != nil {
			t.Fatal(err)
		}
		e := startEvents(t, s)
		e.until("up", func() bool { return e.stdout.String() == "up\n" })
		pids = append(pids, e.pid)
		defer s.Close()
	}
	res, err := a.c.List(ctx, connect.NewRequest(&procpb.ListRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	var got []uint32
	for _, p := range res.Msg.Processes {
		got = append(got, p.Pid)
		c := p.Config
		if c.Cmd != "/bin/bash" || !slices.Equal(c.Args, []string{"-c", "echo up; read -r"}) || c.GetCwd() != "/" {
			t.Errorf("process %d: config %v", p.Pid, c)
		}
		switch p.Pid {
		case pids[0]:
			if p.GetTag() != "one" || c.Envs["K"] != "one" {
				t.Errorf("process %d: tag %v envs %v", p.Pid, p.Tag, c.Envs)
			}
		case pids[1]:
			if p.Tag != nil {
				t.Errorf("process %d: tag %q, none given", p.Pid, p.GetTag())
			}
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(pids))
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	// An exited process is no longer listed.
	if _, err := a.c.CloseStdin(ctx, connect.NewRequest(&procpb.CloseStdinRequest{Process: byPid(pids[0])})); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		res, err := a.c.List(ctx, connect.NewRequest(&procpb.ListRequest{}))
		if err != nil {
			return err
		}
		if len(res.Msg.Processes) != 1 || res.Msg.Processes[0].Pid != pids[1] {
			return fmt.Errorf("listed %v, want only %d", res.Msg.Processes, pids[1])
		}
		return nil
	})
}

func TestEnvdPty(t *testing.T) {
	a := startEnvdAgent(t, Options{})
	ctx := t.Context()
	req := &procpb.StartRequest{
		Process: &procpb.ProcessConfig{Cmd: "/bin/bash", Args: []string{"--norc", "--noprofile", "-i"}, Envs: map[string]string{"PS1": "$ "}},
		Pty:     &procpb.PTY{Size: &procpb.PTY_Size{Cols: 80, Rows: 24}},
	}
	s, err := a.c.Start(ctx, connect.NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	e := startEvents(t, s)
	input := func(s string) {
		t.Helper()
		if _, err := a.c.SendInput(ctx, connect.NewRequest(&procpb.SendInputRequest{
			Process: byPid(e.pid), Input: &procpb.ProcessInput{Input: &procpb.ProcessInput_Pty{Pty: []byte(s)}},
		})); err != nil {
			t.Fatal(err)
		}
	}
	input("echo \"size=$(stty size) term=$TERM\"\n")
	e.until("the size", func() bool { return strings.Contains(e.pty.String(), "size=24 80 term=xterm-256color") })
	if e.stdout.Len() != 0 || e.stderr.Len() != 0 {
		t.Errorf("a terminal's output came as stdout %q or stderr %q", &e.stdout, &e.stderr)
	}
	if _, err := a.c.Update(ctx, connect.NewRequest(&procpb.UpdateRequest{
		Process: byPid(e.pid), Pty: &procpb.PTY{Size: &procpb.PTY_Size{Cols: 100, Rows: 30}},
	})); err != nil {
		t.Fatal(err)
	}
	input("echo \"size=$(stty size)\"\n")
	e.until("the new size", func() bool { return strings.Contains(e.pty.String(), "size=30 100") })

	// A terminal takes no stdin and no close: ^D is its end of input.
	_, err = a.c.SendInput(ctx, connect.NewRequest(&procpb.SendInputRequest{
		Process: byPid(e.pid), Input: &procpb.ProcessInput{Input: &procpb.ProcessInput_Stdin{Stdin: []byte("x")}},
	}))
	wantCode(t, err, connect.CodeFailedPrecondition)
	_, err = a.c.CloseStdin(ctx, connect.NewRequest(&procpb.CloseStdinRequest{Process: byPid(e.pid)}))
	wantCode(t, err, connect.CodeFailedPrecondition)

	if _, err := a.c.SendSignal(ctx, connect.NewRequest(&procpb.SendSignalRequest{Process: byPid(e.pid), Signal: procpb.Signal_SIGNAL_SIGKILL})); err != nil {
		t.Fatal(err)
	}
	if end := e.wait(); end.Status != "signal: killed" {
		t.Errorf("end %v, want killed", end)
	}
}

func TestEnvdKeepalive(t *testing.T) {
	a := startEnvdAgent(t, Options{})
	ctx := t.Context()
	req := connect.NewRequest(bash("read -r"))
	req.Msg.Stdin = new(true)
	req.Header().Set("Keepalive-Ping-Interval", "1")
	s, err := a.c.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	e := startEvents(t, s)
	e.until("two keepalives", func() bool { return e.kept >= 2 })
	if _, err := a.c.CloseStdin(ctx, connect.NewRequest(&procpb.CloseStdinRequest{Process: byPid(e.pid)})); err != nil {
		t.Fatal(err)
	}
	if end := e.wait(); end.ExitCode != 1 {
		t.Errorf("end %v, want read's 1 at end of input", end)
	}
}

func TestKeepaliveInterval(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"50": 50 * time.Second, "": defaultKeepalive, "0": defaultKeepalive, "-3": defaultKeepalive,
		"x": defaultKeepalive, "99999999999999999999": defaultKeepalive,
	} {
		if got := keepaliveInterval(v); got != want {
			t.Errorf("keepaliveInterval(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestEnvdTimeout checks that a Start call's deadline bounds its process,
// as envd's does.
func TestEnvdTimeout(t *testing.T) {
	a := startEnvdAgent(t, Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	s, err := a.c.Start(ctx, connect.NewRequest(bash("echo up; exec sleep 1000")))
	if err != nil {
		t.Fatal(err)
	}
	e := startEvents(t, s)
	for e.next() {
	}
	wantCode(t, s.Err(), connect.CodeDeadlineExceeded)
	testenv.Eventually(t, func() error {
		if err := syscall.Kill(int(e.pid), 0); err == nil && !zombie(int(e.pid)) {
			return fmt.Errorf("process %d still runs past its call's deadline", e.pid)
		}
		return nil
	})
}

// TestEnvdKillAll checks that paddock's KillAll ends envd's processes.
func TestEnvdKillAll(t *testing.T) {
	a := startEnvdAgent(t, Options{})
	ctx := t.Context()
	s, err := a.c.Start(ctx, connect.NewRequest(bash("echo up; exec sleep 1000")))
	if err != nil {
		t.Fatal(err)
	}
	e := startEvents(t, s)
	e.until("up", func() bool { return e.stdout.String() == "up\n" })
	if n := a.srv.killAll(); n < 1 {
		t.Fatalf("killAll killed %d", n)
	}
	if end := e.wait(); end.Status != "signal: killed" {
		t.Errorf("end %v", end)
	}
}

// TestEnvdOutputWaitsForItsClient checks that a Start call's client gets
// all of an output larger than the agent buffers, though it reads none of
// it for a while: the process waits for it.
func TestEnvdOutputWaitsForItsClient(t *testing.T) {
	const size = 3000000
	a := startEnvdAgent(t, Options{OutputBuffer: 64 << 10})
	s, err := a.c.Start(t.Context(), connect.NewRequest(bash("head -c 3000000 /dev/zero | tr '\\0' x")))
	if err != nil {
		t.Fatal(err)
	}
	e := startEvents(t, s)
	// Not reading yet: the output stops once the buffer is full.
	var p *process
	for _, q := range a.srv.procs.list() {
		if q.pid == int(e.pid) {
			p = q
		}
	}
	if p == nil {
		t.Fatalf("process %d is not the agent's", e.pid)
	}
	testenv.Eventually(t, func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if n := p.out[stdoutIdx].end; n < 32<<10 {
			return fmt.Errorf("%d bytes of output so far", n)
		}
		return nil
	})
	for e.next() {
	}
	if e.end == nil || e.end.ExitCode != 0 || e.stdout.Len() != size || strings.Trim(e.stdout.String(), "x") != "" {
		t.Fatalf("end %v, got %d bytes of output, want %d x", e.end, e.stdout.Len(), size)
	}
}
