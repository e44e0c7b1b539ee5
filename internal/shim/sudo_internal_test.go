package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	"golang.org/x/sys/unix"
)

func TestParseSudoArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want sudoArgs
		err  string
	}{
		{args: []string{"id", "-u"}, want: sudoArgs{argv: []string{"id", "-u"}}},
		{args: []string{"-nE", "--", "-x"}, want: sudoArgs{noop: true, preserve: true, argv: []string{"-x"}}},
		{args: []string{"-u", "user", "whoami"}, want: sudoArgs{user: "user", argv: []string{"whoami"}}},
		{args: []string{"-uroot", "whoami"}, want: sudoArgs{user: "root", argv: []string{"whoami"}}},
		{args: []string{"--user=user", "-i"}, want: sudoArgs{user: "user", login: true}},
		{args: []string{"-s", "echo", "hi"}, want: sudoArgs{shell: true, argv: []string{"echo", "hi"}}},
		{args: []string{"-u"}, err: "needs a value"},
		{args: []string{"-Z", "x"}, err: "unknown option -Z"},
		{args: []string{"--bogus"}, err: "unknown option --bogus"},
	} {
		got, err := parseSudoArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || got.user != tc.want.user || got.preserve != tc.want.preserve || got.login != tc.want.login ||
			got.shell != tc.want.shell || got.noop != tc.want.noop || !slices.Equal(got.argv, tc.want.argv) {
			t.Errorf("%q: %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}

func TestSudoRequest(t *testing.T) {
	t.Setenv("SECRET_TOKEN", "s3")
	t.Setenv("TERM", "xterm")
	req, err := sudoArgs{login: true, argv: []string{"echo", "hi"}}.request()
	if err != nil {
		t.Fatal(err)
	}
	if req.User != UserRoot || req.Cwd != "/root" || !slices.Equal(req.Argv[1:], []string{"-l", "-c", "echo hi"}) {
		t.Fatalf("login request: %+v", req)
	}
	env := strings.Join(req.Env, "\n")
	if strings.Contains(env, "SECRET_TOKEN") || !strings.Contains(env, "TERM=xterm") || !strings.Contains(env, "PATH="+sudoSecurePath) {
		t.Fatalf("reset environment: %q", env)
	}
	req, err = sudoArgs{preserve: true, user: "#1000", argv: []string{"env"}}.request()
	if err != nil || req.User != UserDefault || !strings.Contains(strings.Join(req.Env, "\n"), "SECRET_TOKEN=s3") {
		t.Fatalf("-E request: %+v %v", req, err)
	}
	if _, err := (sudoArgs{user: "nobody", argv: []string{"id"}}).request(); err == nil {
		t.Fatal("an unknown user was taken")
	}
	if _, err := (sudoArgs{}).request(); err == nil {
		t.Fatal("no command was taken")
	}
}

// TestSudoServes runs a command through the agent's sudo in-process: the
// caller's pipes are the command's streams, its exit status comes back,
// and a command not found is 127.
func TestSudoServes(t *testing.T) {
	startSudo(t)
	run := func(argv []string, stdin string) (int, string, string) {
		t.Helper()
		inR, inW, _ := os.Pipe()
		outR, outW, _ := os.Pipe()
		errR, errW, _ := os.Pipe()
		go func() { _, _ = io.WriteString(inW, stdin); inW.Close() }()
		var stdout, stderr []byte
		done := make(chan struct{}, 2)
		go func() { stdout, _ = io.ReadAll(outR); done <- struct{}{} }()
		go func() { stderr, _ = io.ReadAll(errR); done <- struct{}{} }()
		var code int
		var rerr error
		// The dial is retried until the listener is up.
		testenv.Eventually(t, func() error {
			code, rerr = runSudo(sudoRequest{Argv: argv, Env: []string{"PATH=" + os.Getenv("PATH")}, User: UserRoot}, inR, outW, errW)
			if rerr != nil && strings.Contains(rerr.Error(), "does not serve sudo") {
				return rerr
			}
			return nil
		})
		inR.Close()
		outW.Close()
		errW.Close()
		<-done
		<-done
		if rerr != nil && code == 0 {
			t.Fatalf("runSudo: %v", rerr)
		}
		return code, string(stdout), string(stderr)
	}
	if code, out, _ := run([]string{"tr", "a-z", "A-Z"}, "hello"); code != 0 || out != "HELLO" {
		t.Fatalf("tr: %d %q", code, out)
	}
	if code, _, errOut := run([]string{"sh", "-c", "echo oops >&2; exit 5"}, ""); code != 5 || errOut != "oops\n" {
		t.Fatalf("exit: %d %q", code, errOut)
	}
	if code, _, _ := run([]string{"no-such-command-here"}, ""); code != 127 {
		t.Fatalf("not found: %d", code)
	}
}

// startSudo serves sudo in-process on a socket of the test's, and returns
// the server and its Close, which the test's end calls too (once).
func startSudo(t *testing.T) (*Server, func()) {
	t.Helper()
	sudoSocket = fmt.Sprintf("@paddock-sudo-test-%d-%s", os.Getpid(), t.Name())
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	r, err := StartReaper(log)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(Options{Logger: log, Reaper: r})
	if err != nil {
		r.Stop()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeSudo(ctx) }()
	var once sync.Once
	closeSrv := func() { once.Do(srv.Close) }
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
		closeSrv()
		r.Stop()
	})
	return srv, closeSrv
}

// dialSudo connects to the test's sudo socket, once it listens.
func dialSudo(t *testing.T) *net.UnixConn {
	t.Helper()
	var c *net.UnixConn
	testenv.Eventually(t, func() (err error) {
		c, err = net.DialUnix("unix", nil, &net.UnixAddr{Name: sudoSocket, Net: "unix"})
		return err
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// sudoAnswer reads the agent's first message on c; a minute without one
// fails the test.
func sudoAnswer(t *testing.T, c *net.UnixConn) sudoMessage {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	var m sudoMessage
	if err := json.NewDecoder(c).Decode(&m); err != nil {
		t.Fatalf("no answer: %v", err)
	}
	return m
}

// setSudoLimits sets the request timeout and the cap on calls for the
// test.
func setSudoLimits(t *testing.T, timeout time.Duration, calls int) {
	savedTimeout, savedCalls := sudoRequestTimeout, maxSudoCalls
	sudoRequestTimeout, maxSudoCalls = timeout, calls
	t.Cleanup(func() { sudoRequestTimeout, maxSudoCalls = savedTimeout, savedCalls })
}

// TestSudoRequestDeadline: a client that never sends its request is
// answered an error once the request's time is up.
func TestSudoRequestDeadline(t *testing.T) {
	setSudoLimits(t, 50*time.Millisecond, 64)
	startSudo(t)
	c := dialSudo(t)
	if m := sudoAnswer(t, c); !strings.Contains(m.Error, "read request") {
		t.Fatalf("answer %+v, want a read error", m)
	}
}

// TestSudoCallsCapped: past maxSudoCalls at once a call is refused, and a
// call that ends makes room; Close ends the calls still reading their
// requests rather than waiting for them.
func TestSudoCallsCapped(t *testing.T) {
	setSudoLimits(t, time.Hour, 2)
	_, closeSrv := startSudo(t)
	first, _ := dialSudo(t), dialSudo(t)
	if m := sudoAnswer(t, dialSudo(t)); !strings.Contains(m.Error, "too many calls") {
		t.Fatalf("third call: %+v, want refused", m)
	}
	first.Close()
	testenv.Eventually(t, func() error {
		c := dialSudo(t)
		_, _ = c.Write([]byte{0, 0, 0, 1}) // a request with no streams
		if m := sudoAnswer(t, c); !strings.Contains(m.Error, "no standard streams") {
			return fmt.Errorf("answer %+v", m)
		}
		return nil
	})
	closed := make(chan struct{})
	go func() { closeSrv(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close waits for calls that never send their requests")
	}
}

// TestSudoRefusesItsConnection: a request whose streams include the
// client's end of the connection is refused at once.
func TestSudoRefusesItsConnection(t *testing.T) {
	setSudoLimits(t, time.Hour, 64)
	startSudo(t)
	c := dialSudo(t)
	// The connection's own descriptor (c.File would dup it and turn off
	// its deadlines).
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	must(t, rc.Control(func(raw uintptr) { fd = int(raw) }))
	if _, _, err := c.WriteMsgUnix([]byte{0, 0, 0, 9}, unix.UnixRights(0, 1, fd), nil); err != nil {
		t.Fatal(err)
	}
	if m := sudoAnswer(t, c); !strings.Contains(m.Error, "is a sudo connection") {
		t.Fatalf("answer %+v, want refused", m)
	}
}

// TestAcceptSudoRetries: an accept that fails (too many open files) is
// tried again until ctx is done, and the connections after it served.
func TestAcceptSudoRetries(t *testing.T) {
	a, b, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	fails := 3
	accept := func() (*net.UnixConn, error) {
		switch {
		case fails > 0:
			fails--
			return nil, syscall.EMFILE
		case a != nil:
			c := a
			a = nil
			return c, nil
		}
		<-ctx.Done()
		return nil, net.ErrClosed
	}
	var served []*net.UnixConn
	done := make(chan struct{})
	go func() {
		acceptSudo(ctx, accept, func(c *net.UnixConn) { served = append(served, c); cancel() })
		close(done)
	}()
	<-done
	if fails != 0 || len(served) != 1 {
		t.Fatalf("%d failures left, %d served", fails, len(served))
	}
}

// socketPair is a connected pair of unix stream sockets.
func socketPair() (*net.UnixConn, *net.UnixConn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, _ := net.FileConn(f)
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1]), nil
}

// TestSudoSignalsStopAtReap: once the command's leader has been reaped,
// neither the relay nor the call's end signals its group's id, which may
// name another's group by then.
func TestSudoSignalsStopAtReap(t *testing.T) {
	other := exec.Command("sleep", "60")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, other.Start())
	g := &sudoGroup{}
	g.started(other.Process.Pid) // the reaped command's id, now other's
	g.reaped()
	a, b, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	gone := make(chan struct{})
	go relaySudoSignals(a, g, gone)
	must(t, json.NewEncoder(b).Encode(sudoMessage{Signal: int(syscall.SIGKILL)}))
	b.Close()
	<-gone
	g.kill(syscall.SIGKILL)
	must(t, other.Process.Signal(syscall.SIGTERM))
	var ee *exec.ExitError
	if err := other.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("the other group ended with %v, want SIGTERM (ours)", err)
	}
}

// TestSudoRelayBoundsMessages: a message line longer than maxSudoMessage
// ends the relay (and so the call) rather than being read on and on.
func TestSudoRelayBoundsMessages(t *testing.T) {
	a, b, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	gone := make(chan struct{})
	go relaySudoSignals(a, &sudoGroup{}, gone)
	must(t, json.NewEncoder(b).Encode(sudoMessage{Signal: int(syscall.SIGWINCH)}))
	if _, err := b.Write([]byte(`{"signal":1,"error":"` + strings.Repeat("x", maxSudoMessage))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gone:
	case <-time.After(time.Minute):
		t.Fatal("the relay reads on past a message's bound")
	}
}
