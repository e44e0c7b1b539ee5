package e2e

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestCLISandboxCommands runs exec, cp and shell in-process against the
// API of a Docker runtime.
func TestCLISandboxCommands(t *testing.T) {
	s := runningSandbox(t)
	env := clitest.Env(s.env.URL, s.env.Key)
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"

	t.Run("exec", func(t *testing.T) {
		tests := []struct {
			name                string
			stdin               string
			args                []string
			wantOut, wantErrSub string
			wantCode            int
		}{
			{name: "streams and exits with the command's code", args: []string{"exec", "p1", "--", "sh", "-c", "echo out; echo err >&2; exit 4"}, wantOut: "out\n", wantErrSub: "err\n", wantCode: 4},
			{name: "without --", args: []string{"exec", "p1", "ls", "-d", "/tmp"}, wantOut: "/tmp\n"},
			{name: "flags before the runtime", args: []string{"exec", "-w", "/tmp", "-e", "A=b", s.rid, "sh", "-c", "pwd; echo $A"}, wantOut: "/tmp\nb\n"},
			{name: "flags after the runtime", args: []string{"exec", "p1", "--org", "acme", "-w", "/tmp", "--", "pwd"}, wantOut: "/tmp\n"},
			{name: "flags around the runtime", args: []string{"exec", "-e", "A=b", "p1", "--ws", "dev", "--", "sh", "-c", "echo $A"}, wantOut: "b\n"},
			{name: "stdin", stdin: "shout\n", args: []string{"exec", "-i", "p1", "--", "tr", "a-z", "A-Z"}, wantOut: "SHOUT\n"},
			{name: "piped stdin without -i", stdin: "piped\n", args: []string{"exec", "p1", "--", "cat"}, wantOut: "piped\n"},
			{name: "-n keeps stdin back", stdin: "piped\n", args: []string{"exec", "-n", "p1", "--", "sh", "-c", "cat; echo end"}, wantOut: "end\n"},
			{name: "killed by a signal", args: []string{"exec", "p1", "--", "sh", "-c", "kill -TERM $$"}, wantCode: 128 + 15},
			{name: "timeout", args: []string{"exec", "--timeout", "100ms", "p1", "--", "sleep", "30"}, wantErrSub: "timed out", wantCode: 128 + 9},
			{name: "the capabilities' tools on PATH, after the image's", args: []string{"exec", "p1", "--", "sh", "-c", "echo ${PATH##*:}"}, wantOut: "/workspace/.paddock/capabilities/bin\n"},
			{name: "a missing command", args: []string{"exec", "p1", "--", "no-such-command"}, wantErrSub: "(command_not_found)", wantCode: 127},
			{name: "arguments past the kernel's limit", args: []string{"exec", "p1", "--", "echo", strings.Repeat("x", 200<<10)}, wantErrSub: "(argument_list_too_long)", wantCode: 126},
			{name: "no command", args: []string{"exec", "p1"}, wantErrSub: "expected a COMMAND", wantCode: cli.ExitUsage},
			{name: "two runtimes before --", args: []string{"exec", "p1", "p2", "--", "true"}, wantErrSub: "expected one RUNTIME", wantCode: cli.ExitUsage},
			{name: "stdin and detach", args: []string{"exec", "-i", "-d", "p1", "--", "cat"}, wantErrSub: "--stdin", wantCode: cli.ExitUsage},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				out, errOut, code := clitest.RunInput(t, env, tt.stdin, tt.args...)
				if code != tt.wantCode || (tt.wantOut != "" && out != tt.wantOut) || !strings.Contains(errOut, tt.wantErrSub) {
					t.Fatalf("exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q in it)", code, tt.wantCode, out, tt.wantOut, errOut, tt.wantErrSub)
				}
			})
		}
		// Ctrl-C: paddock's context ends, as signal.NotifyContext ends it;
		// the command is killed and paddock exits 130, as a shell would.
		ictx, interrupt := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, interrupt)
		var ierr strings.Builder
		ienv := cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &ierr, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
		if code := cli.Run(ictx, ienv, []string{"exec", "p1", "--", "sleep", "60"}); code != cli.ExitInterrupted {
			t.Fatalf("interrupted exec: exit %d, stderr %q", code, ierr.String())
		}
		testenv.WaitFor(t, "the interrupted command to go", func() bool {
			ps, err := s.sdk.ListProcesses(t.Context(), "acme", "dev", s.rid)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				if p.Running && len(p.Argv) > 0 && p.Argv[0] == "sleep" && len(p.Argv) > 1 && p.Argv[1] == "60" {
					return false
				}
			}
			return true
		})

		out := clitest.MustRun(t, env, "exec", "-d", "p1", "--", "sleep", "5")
		if id := strings.TrimSpace(out); !strings.HasPrefix(id, "p-") || !s.process(t, id).Running {
			t.Fatalf("detached: %q", out)
		}
	})

	t.Run("ps, attach and kill", func(t *testing.T) {
		id := strings.TrimSpace(clitest.MustRun(t, env, "exec", "-d", "p1", "--", "sh", "-c", "echo begun; trap 'echo bye; exit 7' TERM; while :; do sleep 0.1; done"))
		testenv.WaitFor(t, "its first output", func() bool { return s.process(t, id).StdoutBytes > 0 })
		out := clitest.MustRun(t, env, "ps", "p1")
		rows := clitest.Table(out)
		found := false
		for _, r := range rows[1:] {
			if r[0] == id && r[2] == "running" && r[3] == "background" {
				found = true
			}
		}
		if rows[0][0] != "ID" || !found {
			t.Fatalf("ps:\n%s", out)
		}
		// attach replays what it printed, follows, and exits with its
		// code once kill has it trap TERM.
		pr, pw := io.Pipe()
		shown := watchScreen(t, pr)
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		done := make(chan int, 1)
		go func() {
			code := cli.Run(t.Context(), cli.Env{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard, LookupEnv: lookup}, []string{"attach", "p1", id})
			pw.Close()
			done <- code
		}()
		shown.expect(t, "begun\n") // the replay is out: attach follows
		clitest.MustRun(t, env, "kill", "p1", id)
		select {
		case code := <-done:
			if shown.end(t); code != 7 || shown.String() != "begun\nbye\n" {
				t.Fatalf("attach: exit %d, %q", code, shown.String())
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("attach did not end")
		}
		clitest.MustRun(t, env, "exec", "-d", "p1", "--", "sleep", "600")
		if out := clitest.MustRun(t, env, "kill", "--all", "p1"); !strings.HasPrefix(out, "killed ") || strings.HasPrefix(out, "killed 0 ") {
			t.Fatalf("kill --all: %q", out)
		}
		if _, errOut, code := clitest.Run(t, env, "kill", "p1"); code != cli.ExitUsage || !strings.Contains(errOut, "expected RUNTIME and PROCESS") {
			t.Fatalf("kill without a process: exit %d, %q", code, errOut)
		}
	})

	t.Run("cp", func(t *testing.T) {
		local := t.TempDir()
		src := filepath.Join(local, "src")
		mustWrite(t, filepath.Join(src, "a.txt"), "alpha\n", 0o644)
		mustWrite(t, filepath.Join(src, "sub", "run.sh"), "#!/bin/sh\necho ran\n", 0o755)
		if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
			t.Fatal(err)
		}

		// Up: a directory into an existing directory lands under its name.
		clitest.MustRun(t, env, "cp", src, "p1:/workspace")
		if out := s.run(t, "sh", "-c", "cat /workspace/src/a.txt; /workspace/src/sub/run.sh; readlink /workspace/src/link"); out != "alpha\nran\na.txt\n" {
			t.Fatalf("in the sandbox: %q", out)
		}
		// A file to a new name, and from standard input.
		clitest.MustRun(t, env, "cp", filepath.Join(src, "a.txt"), "p1:/workspace/b.txt")
		if _, errOut, code := clitest.RunInput(t, env, "from stdin", "cp", "-", "p1:/workspace/c.txt"); code != 0 {
			t.Fatalf("cp -: %s", errOut)
		}
		if out := s.run(t, "cat", "/workspace/b.txt", "/workspace/c.txt"); out != "alpha\nfrom stdin" {
			t.Fatalf("copied files: %q", out)
		}

		// Down: a directory to a new name, a file into a directory, a
		// file to standard output.
		back := filepath.Join(local, "back")
		clitest.MustRun(t, env, "cp", "p1:/workspace/src", back)
		if b, err := os.ReadFile(filepath.Join(back, "sub", "run.sh")); err != nil || string(b) != "#!/bin/sh\necho ran\n" {
			t.Fatalf("downloaded script %q %v", b, err)
		}
		if fi, err := os.Stat(filepath.Join(back, "sub", "run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
			t.Fatalf("downloaded script mode %v %v", fi, err)
		}
		if l, err := os.Readlink(filepath.Join(back, "link")); err != nil || l != "a.txt" {
			t.Fatalf("downloaded link %q %v", l, err)
		}
		clitest.MustRun(t, env, "cp", "p1:/workspace/c.txt", local)
		if b, err := os.ReadFile(filepath.Join(local, "c.txt")); err != nil || string(b) != "from stdin" {
			t.Fatalf("downloaded file %q %v", b, err)
		}
		if out := clitest.MustRun(t, env, "cp", "p1:/workspace/b.txt", "-"); out != "alpha\n" {
			t.Fatalf("to stdout: %q", out)
		}

		roCode, _ := readOnlyRootRefusal(t)
		errCases := []struct {
			name    string
			args    []string
			wantSub string
			code    int
		}{
			{"relative remote path", []string{"cp", "p1:workspace", local}, "must be absolute", cli.ExitUsage},
			{"both local", []string{"cp", local, local}, "RUNTIME:PATH", cli.ExitUsage},
			{"missing remote file", []string{"cp", "p1:/nope", local}, "(file_not_found)", cli.ExitError},
			{"read-only root", []string{"cp", filepath.Join(src, "a.txt"), "p1:/etc/a.txt"}, "(" + roCode + ")", cli.ExitError},
			{"a missing local directory", []string{"cp", "p1:/workspace/b.txt", filepath.Join(local, "nodir", "b.txt")},
				"error: local directory " + filepath.Join(local, "nodir") + " does not exist\n", cli.ExitError},
			{"a missing local directory, with a slash", []string{"cp", "p1:/workspace/b.txt", filepath.Join(local, "nodir") + "/"},
				"error: local directory " + filepath.Join(local, "nodir") + "/ does not exist\n", cli.ExitError},
		}
		for _, tt := range errCases {
			t.Run(tt.name, func(t *testing.T) {
				if _, errOut, code := clitest.Run(t, env, tt.args...); code != tt.code || !strings.Contains(errOut, tt.wantSub) || strings.Contains(errOut, ".paddock-cp") {
					t.Fatalf("exit %d, stderr %q", code, errOut)
				}
			})
		}
	})

	t.Run("shell", func(t *testing.T) {
		// Standard input is not a terminal here: it is typed into the
		// session, which runs on a real terminal in the sandbox.
		out, errOut, code := clitest.RunInput(t, env, "tty; echo $((6*7)); exit 3\n", "shell", "p1")
		if code != 3 || !strings.Contains(out, "/dev/pts/") || !strings.Contains(out, "42") {
			t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
		}
		out, errOut, code = clitest.RunInput(t, env, "", "shell", "-w", "/tmp", "p1", "--", "sh", "-c", "pwd; exit 0")
		if code != 0 || !strings.Contains(out, "/tmp") {
			t.Fatalf("shell with a command: exit %d %q %q", code, out, errOut)
		}
		if _, errOut, code := clitest.Run(t, env, "shell", "p1", "--", "no-such-shell"); code != cli.ExitNotFound || !strings.Contains(errOut, "(command_not_found)") {
			t.Fatalf("missing shell: exit %d %q", code, errOut)
		}
	})

	t.Run("shell on a terminal", func(t *testing.T) {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer tty.Close()
		ptmx = pollable(t, ptmx)
		screen := watchScreen(t, ptmx) // closes ptmx when the test ends
		if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 20, Cols: 60}); err != nil {
			t.Fatal(err)
		}
		before, err := term.GetState(int(tty.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		done := make(chan int, 1)
		go func() {
			done <- cli.Run(ctx, cli.Env{Stdin: tty, Stdout: tty, Stderr: tty, LookupEnv: lookup}, []string{"shell", "p1"})
		}()
		// The local terminal is raw: Enter is a bare CR, passed through.
		io.WriteString(ptmx, "stty size\r")
		screen.expect(t, "20 60")
		// A window change follows the local terminal's size.
		if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, "the resize to reach the sandbox", func() bool {
			_ = syscall.Kill(os.Getpid(), syscall.SIGWINCH)
			io.WriteString(ptmx, "stty size\r")
			return screen.wait("30 100", time.Second)
		})
		// Ctrl-C is a byte for the sandbox, not a signal here.
		io.WriteString(ptmx, "echo $((40+2))go; sleep 1000\r")
		screen.expect(t, "42go")
		// Not while the shell itself is in the foreground, between the
		// echo and the sleep (TestTerminal).
		testenv.WaitFor(t, "the sleep to run", func() bool {
			_, _, code := clitest.Run(t, env, "exec", "p1", "pidof", "sleep")
			return code == 0
		})
		io.WriteString(ptmx, "\x03")
		screen.expect(t, "$ ")
		io.WriteString(ptmx, "echo status-$?\r")
		screen.expect(t, "status-130")
		io.WriteString(ptmx, "exit 5\r")
		select {
		case code := <-done:
			if code != 5 {
				t.Fatalf("exit %d, want 5", code)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("the shell did not end; the screen shows %q", screen.String())
		}
		after, err := term.GetState(int(tty.Fd()))
		if err != nil || !reflect.DeepEqual(before, after) {
			t.Fatalf("the local terminal was not restored: %v", err)
		}
	})

	t.Run("a paused runtime is woken", func(t *testing.T) {
		s.env.Must(t, 200, "POST", s.rtPath+"/pause", nil)
		if _, errOut, code := clitest.Run(t, env, "exec", "p1", "true"); code != 0 {
			t.Fatalf("exec on a paused runtime: exit %d %q", code, errOut)
		}
		var rt pc.Runtime
		s.env.Must(t, 200, "GET", s.rtPath, nil).Decode(t, &rt)
		if rt.Status != pc.RuntimeRunning {
			t.Fatalf("runtime after exec: %s, want running", rt.Status)
		}
	})

	t.Run("a runtime that is not running", func(t *testing.T) {
		s.env.Must(t, 200, "POST", s.rtPath+"/reset", nil)
		defer s.env.Must(t, 200, "POST", s.rtPath+"/start", nil)
		for _, args := range [][]string{{"exec", "p1", "true"}, {"cp", "p1:/tmp", t.TempDir()}, {"shell", "p1"}} {
			// The runtime is named as the user named it, not by its id.
			if _, errOut, code := clitest.Run(t, env, args...); code != cli.ExitError || !strings.Contains(errOut, "(runtime_not_running)") ||
				!strings.Contains(errOut, "runtime p1 ") || strings.Contains(errOut, s.rid) {
				t.Fatalf("%v: exit %d %q", args, code, errOut)
			}
		}
	})
}

func mustWrite(t *testing.T, name, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// pollable returns f as a non-blocking file, whose reads end when it is
// closed or its deadline passes; f is closed.
func pollable(t *testing.T, f *os.File) *os.File {
	t.Helper()
	defer f.Close()
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), f.Name())
}

// screen collects what a terminal shows, read in the background.
type screen struct {
	mu   sync.Mutex
	buf  strings.Builder
	mark int // expect looks after this
	err  error
	done chan struct{} // closed when the reader ends, with err
	read chan struct{} // gets a value after a read (unless it holds one)
}

// watchScreen reads r until the test ends, then closes it.
func watchScreen(t *testing.T, r io.ReadCloser) *screen {
	s := &screen{done: make(chan struct{}), read: make(chan struct{}, 1)}
	go func() {
		defer close(s.done)
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.err = err
			s.mu.Unlock()
			if err != nil {
				return
			}
			select {
			case s.read <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		r.Close()
		<-s.done
	})
	return s
}

// end waits for the reader to end and returns why (io.EOF: the end).
func (s *screen) end(t *testing.T) error {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the session did not end; the screen shows %q", s.String())
	}
	return s.err
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// wait reports whether want shows up after the mark within d; if it does,
// the mark moves past it.
func (s *screen) wait(want string, d time.Duration) bool {
	timeout := time.After(d)
	for !s.find(want) {
		select {
		case <-s.read:
		case <-s.done:
			return s.find(want) // nothing more comes
		case <-timeout:
			return false
		}
	}
	return true
}

// find reports whether want shows after the mark; if it does, the mark
// moves past it.
func (s *screen) find(want string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := strings.Index(s.buf.String()[s.mark:], want)
	if i >= 0 {
		s.mark += i + len(want)
	}
	return i >= 0
}

func (s *screen) expect(t *testing.T, want string) {
	t.Helper()
	if !s.wait(want, 2*time.Minute) {
		t.Fatalf("waiting for %q; the screen shows %q", want, s.String())
	}
}
