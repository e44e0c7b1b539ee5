package agentconn_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
)

// sandbox is a hardened container running the shim as PID 1.
type sandbox struct {
	id     string
	client *agentconn.Client
	// uid and home are what a process of the sandbox's default account
	// sees: id -u and $HOME.
	uid, home string
	// stop stops the sandbox the way its provider does and checks that
	// the agent ended its processes and exited 0.
	stop func(t *testing.T)
	// midway, when set, runs between the checks (a link that drops).
	midway func(t *testing.T)
	// machineRoot: the sandbox's root file system is the machine's own
	// (the ssh provider's bare mode), writable and shared, so the
	// read-only check is left out and copies go under /workspace.
	machineRoot bool
}

// docker runs the docker CLI.
func docker(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return strings.TrimSpace(string(out)), nil
}

// runtimes are the OCI runtimes the agent is tested on: the engine's
// default (runc) and gVisor's runsc.
var runtimes = []struct{ name, runtime string }{{"runc", ""}, {"gvisor", testenv.GVisorRuntime}}

// startSandbox runs the shim in a container hardened as paddock runs
// sandboxes, on the OCI runtime named ("" for the engine's default),
// labelled so that cleanup finds it, and waits until the agent answers.
func startSandbox(t testing.TB, runtime string) *sandbox {
	t.Helper()
	return startSandboxOf(t, runtime, testenv.Binary(t, "paddock-shim"))
}

// startSandboxOf is startSandbox with the shim binary at bin.
func startSandboxOf(t testing.TB, runtime, bin string) *sandbox {
	t.Helper()
	testenv.RequireDocker(t, testenv.TestImage)
	pids := "128"
	if runtime != "" {
		testenv.RequireRuntime(t, runtime)
		// The pids cgroup of a gVisor sandbox counts its kernel's threads
		// and a stub per process too; the docker provider raises the limit
		// to 4×n+64 for it.
		pids = "576"
	}
	instance := testenv.Instance(t)
	t.Cleanup(func() {
		if err := testenv.Sweep(provider.LabelInstance, instance); err != nil {
			t.Errorf("sweep: %v", err)
		}
	})
	run := testenv.ShortTempDir(t)
	if err := os.Chmod(run, 0o777); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := []string{"run", "-d",
		"--label", provider.LabelManaged + "=true",
		"--label", provider.LabelInstance + "=" + instance,
		"--network", "none",
		"--read-only",
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--pids-limit", pids,
		"--tmpfs", "/tmp",
		"--tmpfs", "/workspace:rw,exec",
		"-e", "HOME=/workspace",
		"-w", "/workspace",
		"-v", bin + ":/.paddock/bin/paddock-shim:ro",
		"-v", run + ":/.paddock/run",
		"--entrypoint", "/.paddock/bin/paddock-shim",
	}
	if runtime != "" {
		args = append(args, "--runtime", runtime)
	}
	id, err := docker(ctx, append(args, testenv.TestImage, "serve", "--socket", "/.paddock/run/agent.sock")...)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(testenv.UnixDialer(filepath.Join(run, "agent.sock")))
	t.Cleanup(func() { c.Close() })
	testenv.Eventually(t, func() error {
		hctx, hcancel := context.WithTimeout(ctx, 2*time.Second)
		defer hcancel()
		if err := c.Health(hctx); err != nil {
			logs, _ := docker(context.Background(), "logs", id)
			return fmt.Errorf("agent in container %.12s not ready: %w\n%s", id, err, logs)
		}
		return nil
	})
	stop := func(t *testing.T) {
		ctx := ctxT(t)
		if _, err := docker(ctx, "stop", "-t", "20", id); err != nil {
			t.Fatal(err)
		}
		code, err := docker(ctx, "inspect", "-f", "{{.State.ExitCode}}", id)
		if err != nil || code != "0" {
			t.Fatalf("exit code %q %v", code, err)
		}
	}
	return &sandbox{id: id, client: c, uid: "0", home: "/workspace", stop: stop}
}

// TestDockerSandbox drives the shim binary as PID 1 of a hardened container
// with no network, through the bind-mounted socket: on runc, and under
// gVisor, where the socket reaches the host through runsc's gofer and the
// agent's processes, terminals and signals are gVisor's kernel's.
func TestDockerSandbox(t *testing.T) {
	for _, rt := range runtimes {
		t.Run(rt.name, func(t *testing.T) { testDockerSandbox(t, rt.runtime) })
	}
}

func testDockerSandbox(t *testing.T, runtime string) { testSandbox(t, startSandbox(t, runtime)) }

// testSandbox drives sb's agent end to end: exec, files, tar, a terminal,
// what a foreground exec leaves, orphans, and the stop.
func testSandbox(t *testing.T, sb *sandbox) {
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
		if string(res.Stdout) != sb.home+" /workspace "+sb.uid+"\nin\n" || res.Exit.Code != 4 {
			t.Fatalf("got %q %+v", res.Stdout, res.Exit)
		}
		_, err = c.Run(ctx, agentconn.ExecRequest{Argv: []string{"no-such-command"}})
		wantCode(t, err, errdefs.ErrNotFound, "command_not_found")
	})

	t.Run("files", func(t *testing.T) {
		// 1 MiB: more than one Write message, so by the byte path.
		data := bytes.Repeat([]byte("paddock "), 1<<17)
		dials := bytePathDials(t, c)
		if _, err := c.WriteFile(ctx, "/workspace/dir/f.txt", bytes.NewReader(data), 0o640); err != nil {
			t.Fatal(err)
		}
		if bytePathDials(t, c) != dials+1 {
			t.Fatal("the write did not take the byte path")
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
		scratch := "/tmp"
		if sb.machineRoot {
			scratch = "/workspace"
		} else {
			// The root file system is read-only.
			_, err = c.WriteFile(ctx, "/etc/evil", strings.NewReader("x"), 0)
			wantCode(t, err, errdefs.ErrFailedPrecondition, "read_only_filesystem")
			// And by the byte path, which a file over one message takes.
			_, err = c.WriteFile(ctx, "/etc/evil", bytes.NewReader(data), 0)
			wantCode(t, err, errdefs.ErrFailedPrecondition, "read_only_filesystem")
		}
		tr, err := c.DownloadTar(ctx, "/workspace/dir")
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if _, err := c.UploadTar(ctx, scratch+"/copy", tr); err != nil {
			t.Fatal(err)
		}
		if fi, err := c.Stat(ctx, scratch+"/copy/f.txt"); err != nil || fi.Size != int64(len(data)) || fi.Mode.Perm() != 0o640 {
			t.Fatalf("copied file: %+v %v", fi, err)
		}
	})

	if sb.midway != nil {
		t.Run("midway", sb.midway)
	}

	t.Run("terminal", func(t *testing.T) {
		term, err := c.Terminal(ctx, agentconn.TerminalRequest{Rows: 12, Cols: 34})
		if err != nil {
			t.Fatal(err)
		}
		defer term.Close()
		fmt.Fprintf(term, "stty size\n")
		testenv.ReadUntil(t, term, "12 34")
		term.Resize(56, 78)
		fmt.Fprintf(term, "stty size\n")
		testenv.ReadUntil(t, term, "56 78")
	})

	t.Run("kills what a foreground exec left running", func(t *testing.T) {
		// The shell exits at once; its background sleep, and one that left
		// the group, are gone by the time the exec answers.
		res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!; setsid sleep 1000 >/dev/null 2>&1 & echo $!"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, pid := range strings.Fields(string(res.Stdout)) {
			st, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "grep State /proc/" + pid + "/status || echo gone"}})
			if err != nil || !strings.Contains(string(st.Stdout), "gone") && !strings.Contains(string(st.Stdout), "zombie") {
				t.Fatalf("process %s outlived its exec: %q %v", pid, st.Stdout, err)
			}
		}
	})

	t.Run("reaps orphans as PID 1", func(t *testing.T) {
		// The shell exits at once, leaving its background sleep to PID 1;
		// the sleep leaves the group and drops the agent's mark, so it
		// outlives the exec (as only a process that hides from the agent
		// can). The shell waits until the sleep runs: until then the
		// process still carries the mark (or, mid-exec, reads as having
		// no environment at all, which the sweep looks at again).
		res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "setsid env -u PADDOCK_PROCESS /bin/sleep 1000 >/dev/null 2>&1 & until [ \"$(cat /proc/$!/comm)\" = sleep ]; do :; done; echo $!"}})
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
		testenv.Eventually(t, func() error {
			res, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "cat /proc/" + pid + "/stat 2>/dev/null"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Stdout) > 0 {
				return fmt.Errorf("orphan %s not reaped: %s", pid, res.Stdout)
			}
			return nil
		})
	})

	t.Run("stops as its provider stops it", sb.stop)
}
