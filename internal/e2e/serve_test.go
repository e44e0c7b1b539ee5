package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// server is a `paddock serve` process started by a test.
type server struct {
	cmd  *exec.Cmd
	url  string
	done chan error
	logs *testenv.Buffer // written by the process while tests read it
	// listening is when it printed its address: it serves from then on,
	// before start-up reconciliation is done.
	listening time.Time
}

// serve starts the built binary on dataDir and waits until it prints where
// it listens.
func serve(t *testing.T, bin, shim, dataDir, instance, key string) *server {
	t.Helper()
	return serveIn(t, bin, shim, dataDir, filepath.Join(testenv.ShortTempDir(t), "r"), instance, key)
}

// serveCommand is the command serveIn runs.
func serveCommand(t testing.TB, bin, shim, dataDir, runDir, instance, key string, extraEnv ...string) *exec.Cmd {
	t.Helper()
	// The server's workspace disks are mounted under its data directory.
	t.Cleanup(func() { testenv.UnmountUnder(dataDir) })
	args := []string{"serve",
		"--listen", "127.0.0.1:0",
		"--data-dir", dataDir,
		"--shim-path", shim,
		"--default-image", testenv.TestImage,
		"--pull-images=false",
	}
	if runDir != "" { // else the default, under the data directory
		args = append(args, "--run-dir", runDir)
	}
	cmd := exec.Command(bin, args...)
	// Settings a test may override in extraEnv: the last of a name wins.
	// The SSH gateway on a port of its own: tests run servers side by side.
	cmd.Env = append(os.Environ(), "PADDOCK_BOOTSTRAP_KEY="+key, "PADDOCK_INSTANCE_ID="+instance,
		"PADDOCK_LOG_LEVEL=warn", "PADDOCK_EGRESS_DISABLED=true", "PADDOCK_SSH_LISTEN=127.0.0.1:0")
	if name, runtime := testenv.TestProvider(t); runtime != "" {
		cmd.Env = append(cmd.Env, "PADDOCK_PROVIDERS="+name+"=docker:"+runtime, "PADDOCK_PROVIDER="+name)
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	return cmd
}

// serveIn is serve with the agents' run directory given, so a restarted
// server finds its sandboxes' sockets where the first one put them.
func serveIn(t testing.TB, bin, shim, dataDir, runDir, instance, key string, extraEnv ...string) *server {
	t.Helper()
	return launch(t, serveCommand(t, bin, shim, dataDir, runDir, instance, key, extraEnv...), 60*time.Second, nil)
}

// launch starts cmd, a paddock serve, and waits up to within until it
// listens, until need (when given) has been true of a line it printed, and
// until its start-up reconciliation is done. It is killed when the test
// ends, if it still runs.
func launch(t testing.TB, cmd *exec.Cmd, within time.Duration, need func(line string) bool) *server {
	t.Helper()
	return begin(t, cmd).ready(t, within, need)
}

// starting is a paddock serve started and not yet ready.
type starting struct {
	*server
	lines chan string
}

// begin starts cmd, a paddock serve, without waiting for it (ready
// waits). It is killed when the test ends, if it still runs.
func begin(t testing.TB, cmd *exec.Cmd) *starting {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan error, 1), logs: new(testenv.Buffer)}
	cmd.Stderr = s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	lines := make(chan string, 16)
	go func(lines chan<- string) {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		s.done <- cmd.Wait()
	}(lines)
	return &starting{server: s, lines: lines}
}

// ready waits as launch does.
func (st *starting) ready(t testing.TB, within time.Duration, need func(line string) bool) *server {
	t.Helper()
	s, lines := st.server, st.lines
	needed := need == nil
	deadline := time.After(within)
	for s.url == "" || !needed {
		select {
		case line, ok := <-lines:
			if !ok {
				lines = nil // its end: s.done says why
				continue
			}
			if rest, ok := strings.CutPrefix(line, "paddock listening on "); ok {
				s.url, s.listening = strings.Fields(rest)[0], time.Now()
			}
			needed = needed || need(line)
		case err := <-s.done:
			t.Fatalf("paddock serve exited before it was ready: %v\n%s", err, s.logs)
		case <-deadline:
			t.Fatalf("paddock serve was not ready within %v\n%s", within, s.logs)
		}
	}
	if lines != nil {
		go func(lines <-chan string) {
			for range lines { // what the server prints later
			}
		}(lines)
	}
	s.waitReconciled(t)
	return s
}

// waitReconciled waits until the server's start-up reconciliation is done
// (its readiness check passes). Until then it serves, but answers 503
// reconciling for the runtimes it has not reached; tests that are not
// about that wait, as a careful client would.
func (s *server) waitReconciled(t testing.TB) {
	t.Helper()
	testenv.WaitReconciled(t, s.url, s.logs)
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("paddock serve exited with %v after SIGTERM\n%s", err, s.logs)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("paddock serve did not stop within 30s of SIGTERM\n%s", s.logs)
	}
}

// cli runs the paddock CLI binary against s and returns its stdout.
func (s *server) cli(t *testing.T, bin, key string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PADDOCK_URL=" + s.url, "PADDOCK_API_KEY=" + key}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("paddock %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}

// TestServeRestart drives the built binaries end to end: serve, the CLI
// walkthrough, SIGTERM, and a restart that finds every runtime and ledger
// row as it was and can still act on the sandbox it left running.
func TestServeRestart(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	bin := testenv.Binary(t, "paddock")
	shim := testenv.Binary(t, "paddock-shim")
	instance := testenv.Instance(t)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	data := t.TempDir()
	const key = "pdk_0123456789abcdef0123456789abcdef0123456789abcdef"

	s := serve(t, bin, shim, data, instance, key)
	if resp, err := http.Get(s.url + "/health"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	s.cli(t, bin, key, "org", "create", "acme")
	s.cli(t, bin, key, "workspace", "create", "dev", "--org", "acme")
	p := decodeJSON[pc.Project](t, s.cli(t, bin, key, "project", "create", "p1", "--org", "acme", "--ws", "dev", "--memory", "128", "-o", "json"))
	rt := decodeJSON[pc.Runtime](t, s.cli(t, bin, key, "runtime", "start", p.RuntimeID, "--org", "acme", "--ws", "dev", "-o", "json"))
	if rt.Status != pc.RuntimeRunning {
		t.Fatalf("started runtime: %+v", rt)
	}
	table := s.cli(t, bin, key, "sandbox", "ls", "--org", "acme")
	if !strings.Contains(table, "running") || !strings.Contains(table, rt.CurrentSandboxID[:8]) {
		t.Fatalf("sandbox ls table:\n%s", table)
	}
	before := decodeJSON[pc.List[pc.Sandbox]](t, s.cli(t, bin, key, "sandbox", "ls", "--org", "acme", "-o", "json"))

	s.stop(t)

	s = serve(t, bin, shim, data, instance, key)
	after := decodeJSON[pc.List[pc.Sandbox]](t, s.cli(t, bin, key, "sandbox", "ls", "--org", "acme", "-o", "json"))
	if len(after.Items) != 1 || len(before.Items) != 1 || after.Items[0].ID != before.Items[0].ID ||
		after.Items[0].State != pc.SandboxRunning || after.Items[0].ProviderSandboxID != before.Items[0].ProviderSandboxID {
		t.Fatalf("ledger before restart %+v, after %+v", before.Items, after.Items)
	}
	got := decodeJSON[pc.Runtime](t, s.cli(t, bin, key, "runtime", "get", p.RuntimeID, "--org", "acme", "--ws", "dev", "-o", "json"))
	if got.Status != pc.RuntimeRunning || got.CurrentSandboxID != rt.CurrentSandboxID {
		t.Fatalf("runtime after restart %+v, before %+v", got, rt)
	}
	// The restarted server re-attaches to the sandbox it left running.
	s.cli(t, bin, key, "runtime", "pause", p.RuntimeID, "--org", "acme", "--ws", "dev")
	s.cli(t, bin, key, "runtime", "resume", p.RuntimeID, "--org", "acme", "--ws", "dev")
	reset := decodeJSON[pc.Runtime](t, s.cli(t, bin, key, "runtime", "reset", p.RuntimeID, "--org", "acme", "--ws", "dev", "-o", "json"))
	if reset.Status != pc.RuntimeIdle {
		t.Fatalf("reset: %+v", reset)
	}
	killed := decodeJSON[pc.Sandbox](t, s.cli(t, bin, key, "sandbox", "get", before.Items[0].ProviderSandboxID, "--org", "acme", "-o", "json"))
	if killed.State != pc.SandboxKilled || killed.KillReason != "reset" {
		t.Fatalf("row after reset: %+v", killed)
	}
	s.stop(t)
}
