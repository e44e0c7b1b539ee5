package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestSSHProvider runs paddock with a `kind: ssh` provider in its config
// file, on a machine the test makes (an sshd and a Docker engine of their
// own in a network namespace): /api/capabilities lists it with what the
// machine offers (no GPUs here), a runtime on it runs on the machine's
// engine and answers through the agent, and keeps answering after the
// SSH connection under it is dropped.
func TestSSHProvider(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	m := testenv.StartSSHHost(t)
	m.Engine.LoadImage(t, testenv.TestImage)
	c := serveWithMachine(t, m, "container")
	ctx := t.Context()

	caps, err := c.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	box, ok := caps.Providers["box"]
	if !ok || box.Isolation != "container" || !box.Agent || strings.Join(box.Networks, ",") != string(provider.NetworkNone) || len(box.GPUs) != 0 {
		t.Fatalf("capabilities of box = %+v (listed: %t), want a container provider with network none and no GPUs", box, ok)
	}

	if _, err := c.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "p", Runtime: &pc.RuntimeConfig{
		Provider: "box", MemoryMB: 128, PidsLimit: 64, DiskMB: 64,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
		t.Fatalf("start on the machine: %v", err)
	}
	hello := func() error {
		res, err := c.Exec(ctx, "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: []string{"sh", "-c", "echo hi > /workspace/f && cat /workspace/f"}})
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(res.Stdout)) != "hi" {
			return fmt.Errorf("exec said %q", res.Stdout)
		}
		return nil
	}
	if err := hello(); err != nil {
		t.Fatalf("exec on the machine: %v", err)
	}
	// The sandbox is the machine engine's, not the shared one's.
	onMachine := func() int { return machineContainers(t, m, p.RuntimeID) }
	if n := onMachine(); n != 1 {
		t.Fatalf("%d containers of the runtime on the machine's engine, want 1", n)
	}

	if n := m.DropConnections(t); n == 0 {
		t.Fatal("sshd served no connection to drop")
	}
	testenv.Eventually(t, hello)
	if _, err := c.PauseRuntime(ctx, "acme", "dev", p.RuntimeID); err != nil {
		t.Fatalf("pause after the drop: %v", err)
	}
	if _, err := c.ResumeRuntime(ctx, "acme", "dev", p.RuntimeID); err != nil {
		t.Fatalf("resume after the drop: %v", err)
	}
	if err := hello(); err != nil {
		t.Fatalf("exec after resume: %v", err)
	}
	if err := c.DeleteProject(ctx, "acme", "dev", p.ID); err != nil {
		t.Fatalf("delete the project: %v", err)
	}
	testenv.Eventually(t, func() error {
		if n := onMachine(); n != 0 {
			return fmt.Errorf("%d containers of the deleted project left on the machine", n)
		}
		return nil
	})
}

// serveWithMachine starts a server whose config file lists a docker
// provider (the default) and m as the ssh provider "box" in mode, and
// returns an admin's client of it.
func serveWithMachine(t *testing.T, m *testenv.SSHHost, mode string) *pc.Client {
	t.Helper()
	bin := testenv.Binary(t, "paddock")
	shim := testenv.Binary(t, "paddock-shim")
	const key = "pdk_0123456789abcdef0123456789abcdef0123456789ab55aa"
	data := t.TempDir()
	config := filepath.Join(data, "paddock.yaml")
	y := fmt.Sprintf(`provider: docker
providers:
  - {name: docker, kind: docker}
  - name: box
    kind: ssh
    ssh:
      address: %s
      user: root
      key_file: %s
      host_key: %q
      docker_socket: %s
      run_dir: %s
      disk_dir: %s
      mode: %s
`, m.Addr, m.KeyFile, m.HostKey, m.Socket, filepath.Join(m.Dir, "run"), filepath.Join(m.Dir, "disks"), mode)
	if err := os.WriteFile(config, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := serveCommand(t, bin, shim, data, testenv.ShortTempDir(t)+"/r", testenv.Instance(t), key, "PADDOCK_PROVIDERS=", "PADDOCK_PROVIDER=")
	cmd.Args = append(cmd.Args, "--config", config)
	s := launch(t, cmd, testenv.Patience, nil)
	t.Cleanup(func() { s.stop(t) }) // before the machine goes
	return sdkFor(t, s, key)
}

// machineContainers counts the running containers of runtime rid on m's engine.
func machineContainers(t *testing.T, m *testenv.SSHHost, rid string) int {
	t.Helper()
	eng, err := client.NewClientWithOpts(client.WithHost(m.Engine.Host), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	cs, err := eng.ContainerList(context.Background(), container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", provider.LabelRuntime+"="+rid))})
	if err != nil {
		t.Fatal(err)
	}
	return len(cs)
}
