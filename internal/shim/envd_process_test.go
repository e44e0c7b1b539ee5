package shim

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"connectrpc.com/connect"

	procpb "github.com/paddockhq/paddock/internal/agentpb/envd/process"
	"github.com/paddockhq/paddock/internal/agentpb/envd/process/processconnect"
	"github.com/paddockhq/paddock/internal/testenv"
)

// envdAgent is a Server serving in-process on a unix socket, and an envd
// process client of it that speaks as the e2b SDKs do: Connect with the
// JSON codec over HTTP/1.1.
type envdAgent struct {
	srv *Server
	c   processconnect.ProcessClient
}

// startEnvdAgent serves a Server until the test ends. Tests that use it
// must not run in parallel: a process has one reaper.
func startEnvdAgent(t *testing.T, opts Options) *envdAgent {
	t.Helper()
	srv, c, _ := serveAgent(t, opts, false)
	return &envdAgent{srv: srv, c: processconnect.NewProcessClient(c, "http://agent", connect.WithProtoJSON())}
}

// withUser sets the header in which an e2b SDK names the user a call acts as.
func withUser[T any](req *connect.Request[T], user string) *connect.Request[T] {
	req.Header().Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":")))
	return req
}

// bash is a StartRequest for bash -c script, as the SDK's commands.run
// sends it (without a login shell: the host's profile is not the test's).
func bash(script string) *procpb.StartRequest {
	return &procpb.StartRequest{Process: &procpb.ProcessConfig{Cmd: "/bin/bash", Args: []string{"-c", script}}}
}

// events reads a process's event stream.
type events struct {
	t *testing.T
	s interface {
		Receive() bool
		Err() error
	}
	msg    func() *procpb.ProcessEvent
	pid    uint32
	stdout bytes.Buffer
	stderr bytes.Buffer
	pty    bytes.Buffer
	kept   int // keepalives seen
	end    *procpb.ProcessEvent_EndEvent
}

func startEvents(t *testing.T, s *connect.ServerStreamForClient[procpb.StartResponse]) *events {
	t.Helper()
	e := &events{t: t, s: s, msg: func() *procpb.ProcessEvent { return s.Msg().GetEvent() }}
	e.first()
	return e
}

func connectEvents(t *testing.T, s *connect.ServerStreamForClient[procpb.ConnectResponse]) *events {
	t.Helper()
	e := &events{t: t, s: s, msg: func() *procpb.ProcessEvent { return s.Msg().GetEvent() }}
	e.first()
	return e
}

// first reads the start event.
func (e *events) first() {
	e.t.Helper()
	if !e.s.Receive() {
		e.t.Fatalf("the stream ended before its start event: %v", e.s.Err())
	}
	st := e.msg().GetStart()
	if st == nil || st.Pid == 0 {
		e.t.Fatalf("first event %v, want a start with a pid", e.msg())
	}
	e.pid = st.Pid
}

// next reads one event into e; false at the end of the stream.
func (e *events) next() bool {
	if !e.s.Receive() {
		return false
	}
	switch ev := e.msg().GetEvent().(type) {
	case *procpb.ProcessEvent_Data:
		e.stdout.Write(ev.Data.GetStdout())
		e.stderr.Write(ev.Data.GetStderr())
		e.pty.Write(ev.Data.GetPty())
	case *procpb.ProcessEvent_Keepalive:
		e.kept++
	case *procpb.ProcessEvent_End:
		e.end = ev.End
	default:
		e.t.Errorf("unexpected event %v", e.msg())
	}
	return true
}

// until reads events until cond holds.
func (e *events) until(what string, cond func() bool) {
	e.t.Helper()
	for !cond() {
		if !e.next() {
			e.t.Fatalf("the stream ended (%v) before %s; stdout %q stderr %q pty %q", e.s.Err(), what, &e.stdout, &e.stderr, &e.pty)
		}
	}
}

// wait reads events until the end event and the stream's end.
func (e *events) wait() *procpb.ProcessEvent_EndEvent {
	e.t.Helper()
	for e.next() {
	}
	if err := e.s.Err(); err != nil {
		e.t.Fatalf("stream: %v", err)
	}
	if e.end == nil {
		e.t.Fatalf("the stream ended without an end event; stdout %q stderr %q", &e.stdout, &e.stderr)
	}
	return e.end
}

func wantCode(t *testing.T, err error, code connect.Code) {
	t.Helper()
	if connect.CodeOf(err) != code {
		t.Fatalf("error %v, want %v", err, code)
	}
}

func byPid(pid uint32) *procpb.ProcessSelector {
	return &procpb.ProcessSelector{Selector: &procpb.ProcessSelector_Pid{Pid: pid}}
}

func TestEnvdRunsACommand(t *testing.T) {
	a := startEnvdAgent(t, Options{})
	ctx := t.Context()
	s, err := a.c.Start(ctx, connect.NewRequest(bash("echo $$; echo oops >&2; exit 3")))
	if err != nil {
		t.Fatal(err)
	}
	e := startEvents(t, s)
	end := e.wait()
	if got := strings.TrimSpace(e.stdout.String()); got != strconv.Itoa(int(e.pid)) {
		t.Errorf("stdout %q, want the start event's pid %d (the OS pid)", got, e.pid)
	}
	if e.stderr.String() != "oops\n" {
		t.Errorf("stderr %q", &e.stderr)
	}
	if end.ExitCode != 3 || !end.Exited || end.Status != "exit status 3" || end.GetError() != "exit status 3" {
		t.Errorf("end %v, want exit code 3", end)
	}

	s, err = a.c.Start(ctx, connect.NewRequest(bash("true")))
	if err != nil {
		t.Fatal(err)
	}
	if end := startEvents(t, s).wait(); end.ExitCode != 0 || !end.Exited || end.Status != "exit status 0" || end.Error != nil {
		t.Errorf("end %v, want a success without error", end)
	}

	// What cannot start is refused with envd's codes.
	for _, tt := range []struct {
		req  *procpb.StartRequest
		code connect.Code
	}{
		{&procpb.StartRequest{Process: &procpb.ProcessConfig{}}, connect.CodeInvalidArgument},
		{&procpb.StartRequest{Process: &procpb.ProcessConfig{Cmd: "/bin/true", Cwd: new("/no/such/dir")}}, connect.CodeInvalidArgument},
		{&procpb.StartRequest{Process: &procpb.ProcessConfig{Cmd: "/bin/true", Envs: map[string]string{"A=B": "c"}}}, connect.CodeInvalidArgument},
		{&procpb.StartRequest{Process: &procpb.ProcessConfig{Cmd: "/no/such/command"}}, connect.CodeNotFound},
	} {
		s, err := a.c.Start(ctx, connect.NewRequest(tt.req))
		if err == nil {
			for s.Receive() {
				t.Errorf("%v: event %v", tt.req, s.Msg())
			}
			err = s.Err()
		}
		if connect.CodeOf(err) != tt.code {
			t.Errorf("%v: %v, want %v", tt.req, err, tt.code)
		}
	}
}

func TestEnvdEnvCwdAndUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	a := startEnvdAgent(t, Options{User: UserRoot})
	ctx := t.Context()
	run := func(req *connect.Request[procpb.StartRequest]) string {
		t.Helper()
		s, err := a.c.Start(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		e := startEvents(t, s)
		if end := e.wait(); end.ExitCode != 0 {
			t.Fatalf("end %v, stderr %q", end, &e.stderr)
		}
		return e.stdout.String()
	}
	script := `echo "$(pwd) $(id -u) $HOME $USER $FOO"`
	// No user named: the sandbox's default user, in its home.
	if got := run(connect.NewRequest(bash(script))); got != "/root 0 /root root \n" {
		t.Errorf("default user: %q", got)
	}
	req := bash(script)
	req.Process.Envs = map[string]string{"FOO": "bar baz"}
	req.Process.Cwd = new("/tmp")
	if got := run(withUser(connect.NewRequest(req), "user")); got != "/tmp 1000 /home/user user bar baz\n" {
		t.Errorf("as user in /tmp: %q", got)
	}
	req = bash(script)
	req.Process.Cwd = new("~/")
	if got := run(withUser(connect.NewRequest(req), "root")); got != "/root 0 /root root \n" {
		t.Errorf("as root in ~/: %q", got)
	}
	_, err := startErr(a.c.Start(ctx, withUser(connect.NewRequest(bash("true")), "nobody")))
	wantCode(t, err, connect.CodeUnauthenticated)
}

// startErr drains a stream that should fail and returns its error.
func startErr(s *connect.ServerStreamForClient[procpb.StartResponse], err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n := 0
	for s.Receive() {
		n++
	}
	return n, s.Err()
}

func TestEnvdBackgroundConnectAndKill(t *testing.T) {
	a := startEnvdAgent(t, Options{})
	ctx := t.Context()
	req := bash(`echo started; while read -r line; do echo "got $line"; done`)
	req.Tag, req.Stdin = new("worker"), new(true)
	// The client goes away after the start event: the process runs on.
	startCtx, disconnect := context.WithCancel(ctx)
	s, err := a.c.Start(startCtx, connect.NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	first := startEvents(t, s)
	first.until("started", func() bool { return first.stdout.String() == "started\n" })
	pid := first.pid
	disconnect()
	s.Close()
	// It is one of paddock's own processes too.
	var p *process
	for _, q := range a.srv.procs.list() {
		if q.pid == int(pid) && q.spec.background {
			p = q
		}
	}
	if p == nil {
		t.Fatalf("process %d is not in the agent's process list", pid)
	}
	testenv.Eventually(t, func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.released {
			return fmt.Errorf("the agent has not seen the client leave")
		}
		return nil
	})
	if err := syscall.Kill(int(pid), 0); err != nil {
		t.Fatalf("process %d after its client left: %v", pid, err)
	}

	// Re-attached by its tag: the output from now on.
	cs, err := a.c.Connect(ctx, connect.NewRequest(&procpb.ConnectRequest{Process: &procpb.ProcessSelector{Selector: &procpb.ProcessSelector_Tag{Tag: "worker"}}}))
	if err != nil {
		t.Fatal(err)
	}
	e := connectEvents(t, cs)
	if e.pid != pid {
		t.Fatalf("connect by tag: pid %d, want %d", e.pid, pid)
	}
	if _, err := a.c.SendInput(ctx, connect.NewRequest(&procpb.SendInputRequest{
		Process: byPid(pid), Input: &procpb.ProcessInput{Input: &procpb.ProcessInput_Stdin{Stdin: []byte("one\n")}},
	})); err != nil {
		t.Fatal(err)
	}
	e.until("the input's echo", func() bool { return e.stdout.String() == "got one\n" })

	if _, err := a.c.SendSignal(ctx, connect.NewRequest(&procpb.SendSignalRequest{Process: byPid(pid), Signal: procpb.Signal_SIGNAL_SIGKILL})); err != nil {
		t.Fatal(err)
	}
	end := e.wait()
	if end.ExitCode != -1 || end.Exited || end.Status != "signal: killed" || end.GetError() != "signal: killed" {
		t.Errorf("end %v, want killed", end)
	}
	// Once it is gone envd knows it no more: the SDK's kill answers false.
	testenv.Eventually(t, func() error {
		_, err := a.c.SendSignal(ctx, connect.NewRequest(&procpb.SendSignalRequest{Process: byPid(pid), Signal: procpb.Signal_SIGNAL_SIGKILL}))
		if connect.CodeOf(err) != connect.CodeNotFound {
			return fmt.Errorf("signal after the exit: %v", err)
		}
		return nil
	})
	_, err = startErrConnect(a.c.Connect(ctx, connect.NewRequest(&procpb.ConnectRequest{Process: byPid(pid)})))
	wantCode(t, err, connect.CodeNotFound)
}

func startErrConnect(s *connect.ServerStreamForClient[procpb.ConnectResponse], err error) (int, error) {
	if err != nil {
		return 0, err
	}
	n := 0
	for s.Receive() {
		n++
	}
	return n, s.Err()
}

func TestEnvdUnknownProcess(t *testing.T) {
	a := startEnvdAgent(t, Options{})
	ctx := t.Context()
	sel := byPid(999999)
	_, err := startErrConnect(a.c.Connect(ctx, connect.NewRequest(&procpb.ConnectRequest{Process: sel})))
	wantCode(t, err, connect.CodeNotFound)
	_, err = a.c.SendInput(ctx, connect.NewRequest(&procpb.SendInputRequest{Process: sel, Input: &procpb.ProcessInput{Input: &procpb.ProcessInput_Stdin{Stdin: []byte("x")}}}))
	wantCode(t, err, connect.CodeNotFound)
	_, err = a.c.SendSignal(ctx, connect.NewRequest(&procpb.SendSignalRequest{Process: sel, Signal: procpb.Signal_SIGNAL_SIGKILL}))
	wantCode(t, err, connect.CodeNotFound)
	_, err = a.c.CloseStdin(ctx, connect.NewRequest(&procpb.CloseStdinRequest{Process: sel}))
	wantCode(t, err, connect.CodeNotFound)
	_, err = a.c.Update(ctx, connect.NewRequest(&procpb.UpdateRequest{Process: sel, Pty: &procpb.PTY{Size: &procpb.PTY_Size{Rows: 10, Cols: 10}}}))
	wantCode(t, err, connect.CodeNotFound)
	_, err = a.c.SendSignal(ctx, connect.NewRequest(&procpb.SendSignalRequest{Process: &procpb.ProcessSelector{Selector: &procpb.ProcessSelector_Tag{Tag: "none"}}, Signal: procpb.Signal_SIGNAL_SIGKILL}))
	wantCode(t, err, connect.CodeNotFound)
	_, err = a.c.SendSignal(ctx, connect.NewRequest(&procpb.SendSignalRequest{Process: &procpb.ProcessSelector{}, Signal: procpb.Signal_SIGNAL_SIGKILL}))
	wantCode(t, err, connect.CodeUnimplemented)
}

func TestEnvdStdin(t *testing.T) {
	a := startEnvdAgent(t, Options{})
	ctx := t.Context()
	req := &procpb.StartRequest{Process: &procpb.ProcessConfig{Cmd: "cat"}, Stdin: new(true)}
	s, err := a.c.Start(ctx, connect.NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	e := startEvents(t, s)
	if _, err := a.c.SendInput(ctx, connect.NewRequest(&procpb.SendInputRequest{
		Process: byPid(e.pid), Input: &procpb.ProcessInput{Input: &procpb.ProcessInput_Stdin{Stdin: []byte("hello\n")}},
	})); err != nil {
		t.Fatal(err)
	}
	e.until("the echo", func() bool { return e.stdout.String() == "hello\n" })
	// A terminal's input is not a pipe's.
	_, err = a.c.SendInput(ctx, connect.NewRequest(&procpb.SendInputRequest{
		Process: byPid(e.pid), Input: &procpb.ProcessInput{Input: &procpb.ProcessInput_Pty{Pty: []byte("x")}},
	}))
	wantCode(t, err, connect.CodeFailedPrecondition)
	if _, err := a.c.CloseStdin(ctx, connect.NewRequest(&procpb.CloseStdinRequest{Process: byPid(e.pid)})); err != nil {
		t.Fatal(err)
	}
	if end := e.wait(); end.ExitCode != 0 || e.stdout.String() != "hello\n" {
		t.Errorf("after closing stdin: end %v, stdout %q", end, &e.stdout)
	}

	// StreamInput: the process named first, then its input, in order.
	s, err = a.c.Start(ctx, connect.NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	e = startEvents(t, s)
	in := a.c.StreamInput(ctx)
	for _, m := range []*procpb.StreamInputRequest{
		{Event: &procpb.StreamInputRequest_Start{Start: &procpb.StreamInputRequest_StartEvent{Process: byPid(e.pid)}}},
		{Event: &procpb.StreamInputRequest_Data{Data: &procpb.StreamInputRequest_DataEvent{Input: &procpb.ProcessInput{Input: &procpb.ProcessInput_Stdin{Stdin: []byte("a")}}}}},
		{Event: &procpb.StreamInputRequest_Keepalive{Keepalive: &procpb.StreamInputRequest_KeepAlive{}}},
		{Event: &procpb.StreamInputRequest_Data{Data: &procpb.StreamInputRequest_DataEvent{Input: &procpb.ProcessInput{Input: &procpb.ProcessInput_Stdin{Stdin: []byte("b\n")}}}}},
	} {
		if err := in.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := in.CloseAndReceive(); err != nil {
		t.Fatal(err)
	}
	e.until("the streamed input's echo", func() bool { return e.stdout.String() == "ab\n" })
	if _, err := a.c.CloseStdin(ctx, connect.NewRequest(&procpb.CloseStdinRequest{Process: byPid(e.pid)})); err != nil {
		t.Fatal(err)
	}
	e.wait()

	// stdin false: the process reads /dev/null, and input is refused.
	req = &procpb.StartRequest{Process: &procpb.ProcessConfig{Cmd: "/bin/bash", Args: []string{"-c", "cat; echo eof"}}, Stdin: new(false)}
	s, err = a.c.Start(ctx, connect.NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	e = startEvents(t, s)
	if end := e.wait(); end.ExitCode != 0 || e.stdout.String() != "eof\n" {
		t.Errorf("without stdin: end %v, stdout %q", end, &e.stdout)
	}
}

func TestEnvdSignalTerm(t *testing.T) {
	a := startEnvdAgent(t, Options{})
	ctx := t.Context()
	s, err := a.c.Start(ctx, connect.NewRequest(bash(`trap 'echo term; exit 7' TERM; echo ready; while :; do sleep 0.05; done`)))
	if err != nil {
		t.Fatal(err)
	}
	e := startEvents(t, s)
	e.until("ready", func() bool { return e.stdout.String() == "ready\n" })
	_, err = a.c.SendSignal(ctx, connect.NewRequest(&procpb.SendSignalRequest{Process: byPid(e.pid)}))
	wantCode(t, err, connect.CodeUnimplemented) // envd's answer to a signal it does not know
	if _, err := a.c.SendSignal(ctx, connect.NewRequest(&procpb.SendSignalRequest{Process: byPid(e.pid), Signal: procpb.Signal_SIGNAL_SIGTERM})); err != nil {
		t.Fatal(err)
	}
	if end := e.wait(); end.ExitCode != 7 || e.stdout.String() != "ready\nterm\n" {
		t.Errorf("after SIGTERM: end %v, stdout %q", end, &e.stdout)
	}
}
