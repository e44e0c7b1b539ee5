package agentconn_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// testImage is built by scripts/build-images.sh test.
const testImage = "paddock/test-busybox:latest"

// requireDocker skips unless a Docker engine and the test image are there;
// with PADDOCK_REQUIRE_DOCKER or CI set it fails instead.
func requireDocker(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	missing := ""
	if out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "-f", "{{.Id}}", testImage).CombinedOutput(); err != nil {
		missing = fmt.Sprintf("docker or image %s unavailable (scripts/build-images.sh test builds it): %v: %s", testImage, err, bytes.TrimSpace(out))
	}
	if missing == "" {
		return
	}
	if os.Getenv("PADDOCK_REQUIRE_DOCKER") != "" || os.Getenv("CI") != "" {
		t.Fatal(missing)
	}
	t.Skip(missing)
}

var (
	shimOnce sync.Once
	shimPath string
	shimErr  error
)

// shimBinary builds cmd/paddock-shim once, static.
func shimBinary(t testing.TB) string {
	t.Helper()
	shimOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		dir, err := os.MkdirTemp("", "pdk-shim-bin")
		if err != nil {
			shimErr = err
			return
		}
		shimPath = filepath.Join(dir, "paddock-shim")
		cmd := exec.Command("go", "build", "-trimpath", "-o", shimPath, "./cmd/paddock-shim")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			shimErr = fmt.Errorf("build paddock-shim: %v: %s", err, out)
		}
	})
	if shimErr != nil {
		t.Fatal(shimErr)
	}
	return shimPath
}

// removeShimBinary deletes what shimBinary built.
func removeShimBinary() {
	if shimPath != "" {
		os.RemoveAll(filepath.Dir(shimPath))
	}
}

// sandbox is a hardened container running the shim as PID 1.
type sandbox struct {
	id     string
	client *agentconn.Client
}

// docker runs the docker CLI.
func docker(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return strings.TrimSpace(string(out)), nil
}

// startSandbox runs the shim in a container hardened as paddock runs
// sandboxes, labelled so that cleanup finds it, and waits until the agent
// answers.
func startSandbox(t testing.TB) *sandbox {
	t.Helper()
	requireDocker(t)
	bin := shimBinary(t)
	b := make([]byte, 6)
	rand.Read(b)
	instance := "pdktest-agentconn-" + hex.EncodeToString(b)
	t.Cleanup(func() { removeLabelled(t, instance) })

	run, err := os.MkdirTemp("", "pdk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	if err := os.Chmod(run, 0o777); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := docker(ctx, "run", "-d",
		"--label", "dev.paddock.managed=true",
		"--label", "dev.paddock.instance="+instance,
		"--network", "none",
		"--read-only",
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--pids-limit", "128",
		"--tmpfs", "/tmp",
		"--tmpfs", "/workspace:rw,exec",
		"-e", "HOME=/workspace",
		"-w", "/workspace",
		"-v", bin+":/.paddock/bin/paddock-shim:ro",
		"-v", run+":/.paddock/run",
		"--entrypoint", "/.paddock/bin/paddock-shim",
		testImage,
		"serve", "--socket", "/.paddock/run/agent.sock",
	)
	if err != nil {
		t.Fatal(err)
	}
	c := agentconn.New(dialer(filepath.Join(run, "agent.sock")))
	t.Cleanup(func() { c.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		hctx, hcancel := context.WithTimeout(ctx, 2*time.Second)
		err := c.Health(hctx)
		hcancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			logs, _ := docker(context.Background(), "logs", id)
			t.Fatalf("agent in container %.12s not ready: %v\n%s", id, err, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &sandbox{id: id, client: c}
}

// removeLabelled force-removes the containers (and their anonymous volumes)
// labelled with instance.
func removeLabelled(t testing.TB, instance string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ids, err := docker(ctx, "ps", "-aq", "--filter", "label=dev.paddock.instance="+instance)
	if err != nil {
		t.Errorf("list containers: %v", err)
		return
	}
	for _, id := range strings.Fields(ids) {
		if _, err := docker(ctx, "rm", "-f", "-v", id); err != nil {
			t.Errorf("remove container: %v", err)
		}
	}
}

// TestDockerSandbox drives the shim binary as PID 1 of a hardened container
// with no network, through the bind-mounted socket.
func TestDockerSandbox(t *testing.T) {
	sb := startSandbox(t)
	c := sb.client
	ctx := ctxT(t)

	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.PID != 1 {
		t.Fatalf("agent pid %d, want 1", info.PID)
	}

	t.Run("run", func(t *testing.T) {
		res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", `echo "$HOME $(pwd) $(id -u)"; cat; exit 4`}, Stdin: strings.NewReader("in\n")})
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Stdout) != "/workspace /workspace 0\nin\n" || res.Exit.Code != 4 {
			t.Fatalf("got %q %+v", res.Stdout, res.Exit)
		}
		_, err = c.Run(ctx, agentconn.ExecRequest{Argv: []string{"no-such-command"}})
		wantCode(t, err, errdefs.ErrNotFound, "command_not_found")
	})

	t.Run("files", func(t *testing.T) {
		data := bytes.Repeat([]byte("paddock "), 1<<17) // 1 MiB
		if _, err := c.WriteFile(ctx, "/workspace/dir/f.txt", bytes.NewReader(data), 0o640); err != nil {
			t.Fatal(err)
		}
		r, err := c.ReadFile(ctx, "/workspace/dir/f.txt")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		got.ReadFrom(r)
		r.Close()
		if !bytes.Equal(got.Bytes(), data) {
			t.Fatalf("read back %d bytes", got.Len())
		}
		// The root file system is read-only.
		_, err = c.WriteFile(ctx, "/etc/evil", strings.NewReader("x"), 0)
		wantCode(t, err, errdefs.ErrFailedPrecondition, "read_only_filesystem")
		tr, err := c.DownloadTar(ctx, "/workspace/dir")
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if _, err := c.UploadTar(ctx, "/tmp/copy", tr); err != nil {
			t.Fatal(err)
		}
		if fi, err := c.Stat(ctx, "/tmp/copy/f.txt"); err != nil || fi.Size != int64(len(data)) || fi.Mode.Perm() != 0o640 {
			t.Fatalf("copied file: %+v %v", fi, err)
		}
	})

	t.Run("terminal", func(t *testing.T) {
		term, err := c.Terminal(ctx, agentconn.TerminalRequest{Rows: 12, Cols: 34})
		if err != nil {
			t.Fatal(err)
		}
		defer term.Close()
		fmt.Fprintf(term, "stty size\n")
		readUntil(t, term, "12 34")
		term.Resize(56, 78)
		fmt.Fprintf(term, "stty size\n")
		readUntil(t, term, "56 78")
	})

	t.Run("reaps orphans as PID 1", func(t *testing.T) {
		// The shell exits at once, leaving its background sleep to PID 1.
		res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!"}})
		if err != nil {
			t.Fatal(err)
		}
		pid := strings.TrimSpace(string(res.Stdout))
		status, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "grep PPid /proc/" + pid + "/status"}})
		if err != nil || !strings.Contains(string(status.Stdout), "\t1\n") {
			t.Fatalf("orphan %s status %q %v", pid, status.Stdout, err)
		}
		if _, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"kill", "-9", pid}}); err != nil {
			t.Fatal(err)
		}
		// Dead and reaped: no zombie is left in the process table.
		deadline := time.Now().Add(10 * time.Second)
		for {
			res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "cat /proc/" + pid + "/stat 2>/dev/null"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Stdout) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("orphan %s not reaped: %s", pid, res.Stdout)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})

	t.Run("stops on SIGTERM", func(t *testing.T) {
		if _, err := docker(ctx, "stop", "-t", "20", sb.id); err != nil {
			t.Fatal(err)
		}
		code, err := docker(ctx, "inspect", "-f", "{{.State.ExitCode}}", sb.id)
		if err != nil || code != "0" {
			t.Fatalf("exit code %q %v", code, err)
		}
	})
}
