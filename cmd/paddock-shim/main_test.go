package main

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"go/build"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/testenv"
)

const module = "github.com/paddockhq/paddock"

func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(build.Default.GOROOT, "bin", "go")
}

// TestDependencies keeps the shim free of the control plane: besides the
// standard library it may use only its own packages and a few modules.
func TestDependencies(t *testing.T) {
	cmd := exec.Command(goTool(t), "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	ownAllowed := map[string]bool{
		module + "/cmd/paddock-shim":                true,
		module + "/internal/shim":                   true,
		module + "/internal/shim/computeruse":       true,
		module + "/internal/agentauth":              true,
		module + "/internal/agentpb":                true,
		module + "/internal/agentpb/agentpbconnect": true,
		// envd's protocol, which the agent serves to the e2b SDKs.
		module + "/internal/agentpb/envd/filesystem":                   true,
		module + "/internal/agentpb/envd/filesystem/filesystemconnect": true,
		module + "/internal/agentpb/envd/process":                      true,
		module + "/internal/agentpb/envd/process/processconnect":       true,
	}
	modulesAllowed := []string{
		"golang.org/x/sys/",
		"github.com/creack/pty",
		"connectrpc.com/connect",
		"google.golang.org/protobuf/",
	}
	var deps int
	for _, p := range strings.Fields(string(out)) {
		deps++
		if strings.HasPrefix(p, module+"/") || p == module {
			if !ownAllowed[p] {
				t.Errorf("paddock-shim imports %s", p)
			}
			continue
		}
		ok := false
		for _, m := range modulesAllowed {
			if p == strings.TrimSuffix(m, "/") || strings.HasPrefix(p, m) || strings.HasPrefix(p, m+"/") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("paddock-shim imports %s, which is not an allowed module", p)
		}
	}
	if deps == 0 {
		t.Fatal("go list returned nothing")
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinaries()
	os.Exit(code)
}

// shimBinary builds the shim the way it ships: static, without cgo.
func shimBinary(t *testing.T) string {
	t.Helper()
	return testenv.Binary(t, "paddock-shim")
}

func TestStaticBinary(t *testing.T) {
	f, err := elf.Open(shimBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary has a dynamic loader (PT_INTERP): it is not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary needs shared libraries %v", libs)
	}
}

// runShim starts the built shim on a socket in a new directory and waits
// until it answers /healthz over HTTP/2 cleartext.
func runShim(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	sock := filepath.Join(testenv.ShortTempDir(t), "agent.sock")
	cmd := exec.Command(shimBinary(t), append([]string{"serve", "--socket", sock}, args...)...)
	cmd.Stderr = t.Output()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{
		Protocols: &p,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	defer hc.CloseIdleConnections()
	testenv.Eventually(t, func() error {
		res, err := hc.Get("http://agent/healthz")
		if err != nil {
			return fmt.Errorf("shim not ready: %w", err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.ProtoMajor != 2 {
			t.Fatalf("healthz: %s over %s", res.Status, res.Proto)
		}
		return nil
	})
	return cmd, sock
}

// waitExit waits for the shim to exit and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("shim did not exit")
		return -1
	}
}

func pidGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestSIGTERM checks the shutdown: the signal is forwarded to the
// processes, those that ignore it are killed after the grace period, and
// the shim exits cleanly and removes its socket.
func TestSIGTERM(t *testing.T) {
	cmd, sock := runShim(t, "--grace", "300ms")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c := agentconn.New(testenv.UnixDialer(sock))
	defer c.Close()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.PID != cmd.Process.Pid || info.Version != "dev" {
		t.Fatalf("info %+v", info)
	}
	start := func(script string) *agentconn.ExecStream {
		es, err := c.Exec(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", script}, Background: true})
		if err != nil {
			t.Fatal(err)
		}
		if ev, err := es.Recv(); err != nil || string(ev.Data) != "ready\n" {
			t.Fatalf("got %+v %v", ev, err)
		}
		return es
	}
	polite := start(`trap 'exit 3' TERM; echo ready; while :; do sleep 0.05; done`)
	stubborn := start(`trap '' TERM; echo ready; exec sleep 1000`)
	politeDone := make(chan agentconn.ExitStatus, 1)
	go func() {
		st, _ := polite.Wait(nil, nil)
		politeDone <- st
	}()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if st := <-politeDone; st.Code != 3 {
		t.Errorf("polite process ended with %+v, want code 3 from its TERM trap", st)
	}
	stubborn.Close()
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("shim exit code %d", code)
	}
	for _, pid := range []int{polite.PID(), stubborn.PID()} {
		if !pidGone(pid) {
			t.Errorf("process %d outlived the shim", pid)
		}
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
}

// TestForwardSignal checks that SIGUSR1 reaches the processes without
// stopping the shim.
func TestForwardSignal(t *testing.T) {
	cmd, sock := runShim(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c := agentconn.New(testenv.UnixDialer(sock))
	defer c.Close()
	es, err := c.Exec(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", `trap 'echo usr1; exit 0' USR1; echo ready; while :; do sleep 0.05; done`}})
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	if ev, err := es.Recv(); err != nil || string(ev.Data) != "ready\n" {
		t.Fatalf("got %+v %v", ev, err)
	}
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if st, err := es.Wait(&out, nil); err != nil || st.Code != 0 || out.String() != "usr1\n" {
		t.Fatalf("exit %+v %v output %q", st, err, out.String())
	}
	if err := c.Health(ctx); err != nil {
		t.Fatalf("shim stopped: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestUsage(t *testing.T) {
	tests := [][]string{
		nil,
		{"bogus"},
		{"serve", "extra"},
		{"serve", "--log-level", "loud"},
		{"serve", "--no-such-flag"},
	}
	for _, args := range tests {
		if err := run(args, &strings.Builder{}); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
	var out strings.Builder
	if err := run([]string{"version"}, &out); err != nil || strings.TrimSpace(out.String()) != version {
		t.Errorf("version: %q %v", out.String(), err)
	}
}

// TestServeOptions: --listen alone serves no unix socket, with --socket
// both; no address means the default socket; --listen without
// --key-file is refused; --run-dir is passed on.
func TestServeOptions(t *testing.T) {
	for _, c := range []struct {
		args                []string
		socket, listen, run string
	}{
		{nil, defaultSocket, "", ""},
		{[]string{"--listen", ":7443", "--key-file", "k", "--run-dir", "/r"}, "", ":7443", "/r"},
		{[]string{"--listen", ":7443", "--key-file", "k", "--socket", "/s.sock"}, "/s.sock", ":7443", ""},
		{[]string{"--socket", "/s.sock"}, "/s.sock", "", ""},
	} {
		o, err := serveOptions(c.args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if o.Socket != c.socket || o.Listen != c.listen || o.RunDir != c.run {
			t.Errorf("%q: socket %q listen %q run dir %q", c.args, o.Socket, o.Listen, o.RunDir)
		}
	}
	err := run([]string{"serve", "--listen", ":7443"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--listen needs --key-file") {
		t.Errorf("--listen without a key: %v", err)
	}
}
