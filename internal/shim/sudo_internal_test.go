package shim

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
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
	sudoSocket = fmt.Sprintf("@paddock-sudo-test-%d", os.Getpid())
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	r, err := StartReaper(log)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	srv, err := NewServer(Options{Logger: log, Reaper: r})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeSudo(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()

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
