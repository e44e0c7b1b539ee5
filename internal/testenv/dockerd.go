package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"
)

// Dockerd is a Docker engine a test starts for itself, with its own
// socket, data root, exec root, containerd and network namespace, and no
// bridge or firewall rules: tests that stop, break or restart an engine
// use one of these, never the shared engine.
type Dockerd struct {
	Host string // unix://… for DOCKER_HOST or a provider's Host
	dir  string
	cmd  *exec.Cmd
	logs *Buffer // dockerd writes it while Start reads it
}

// StartDockerd starts a dedicated engine under a fresh directory and stops
// it when t ends. It needs root and the dockerd binary; in CI a missing one
// fails the test.
func StartDockerd(t testing.TB) *Dockerd {
	t.Helper()
	return StartDockerdWith(t, nil)
}

// StartDockerdWith is StartDockerd with settings added to the engine's
// daemon.json (say, default-address-pools).
func StartDockerdWith(t testing.TB, settings map[string]any) *Dockerd {
	t.Helper()
	if _, err := exec.LookPath("dockerd"); err != nil || os.Geteuid() != 0 {
		unavailable(t, "a dedicated Docker engine needs root and dockerd (%v)", err)
	}
	d := &Dockerd{dir: ShortTempDir(t), logs: new(Buffer)}
	d.Host = "unix://" + filepath.Join(d.dir, "docker.sock")
	if err := os.WriteFile(filepath.Join(d.dir, "daemon.json"), daemonConfig(t, settings), 0o600); err != nil {
		t.Fatal(err)
	}
	d.Start(t)
	t.Cleanup(func() {
		d.Stop(t)
		UnmountUnder(d.dir) // what the engine left mounted under its roots
	})
	return d
}

// Start starts the engine (again) and waits until it answers.
func (d *Dockerd) Start(t testing.TB) {
	t.Helper()
	d.cmd = exec.Command("dockerd",
		"--host", d.Host,
		"--data-root", filepath.Join(d.dir, "data"),
		"--exec-root", filepath.Join(d.dir, "exec"),
		"--pidfile", filepath.Join(d.dir, "dockerd.pid"),
		"--config-file", filepath.Join(d.dir, "daemon.json"),
		"--bridge", "none", "--iptables=false", "--ip6tables=false", "--ip-masq=false",
	)
	d.cmd.Stdout, d.cmd.Stderr = d.logs, d.logs
	// A network namespace of its own: an engine started with --bridge none
	// deletes docker0 where it runs, which would take the shared engine's
	// default bridge away from the host.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWNET}
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start dockerd: %v", err)
	}
	cli, err := client.NewClientWithOpts(client.WithHost(d.Host), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	Eventually(t, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := cli.Ping(ctx); err != nil {
			return fmt.Errorf("the dedicated dockerd does not answer: %w\n%s", err, d.logs)
		}
		return nil
	})
}

// Stop stops the engine (SIGTERM, then SIGKILL after 30 s) and waits for
// it and its containerd to exit. Stopping a stopped engine does nothing.
func (d *Dockerd) Stop(t testing.TB) {
	t.Helper()
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	cmd := d.cmd
	d.cmd = nil
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // its own process group only
		<-done
	}
}

// daemonConfig is a daemon.json holding the shared engine's OCI runtimes
// (runsc, as scripts/setup-host.sh registers it), so the dedicated engine
// runs what the shared one does and nothing else of its configuration,
// and settings.
func daemonConfig(t testing.TB, settings map[string]any) []byte {
	t.Helper()
	var shared struct {
		Runtimes json.RawMessage `json:"runtimes"`
	}
	conf := map[string]any{}
	b, err := os.ReadFile("/etc/docker/daemon.json")
	if err == nil && json.Unmarshal(b, &shared) == nil && len(shared.Runtimes) > 0 {
		conf["runtimes"] = shared.Runtimes
	}
	for k, v := range settings {
		conf[k] = v
	}
	out, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
