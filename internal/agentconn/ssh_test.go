package agentconn_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/provider"
	sshprovider "github.com/paddockhq/paddock/internal/providers/ssh"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestSSHSandbox runs the same agent checks on a machine reached over
// SSH (testenv.StartSSHHost: its own sshd and Docker engine in a network
// namespace), through the ssh provider: the agent is PID 1 of a container
// on the machine's engine, its link tunnelled through the one SSH
// connection. Midway, sshd drops the connection: the checks after it run
// on the link made again.
func TestSSHSandbox(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	m := testenv.StartSSHHost(t)
	m.Engine.LoadImage(t, testenv.TestImage)
	p, err := sshprovider.New(sshprovider.Config{
		Name: "machine", Address: m.Addr, User: "root", KeyFile: m.KeyFile, HostKey: m.HostKey,
		DockerSocket: m.Socket, RunDir: filepath.Join(m.Dir, "run"), DiskDir: filepath.Join(m.Dir, "disks"),
		Instance: testenv.Instance(t), ShimPath: testenv.Binary(t, "paddock-shim"),
		StartTimeout: 30 * time.Second, KeepAlive: 2 * time.Second,
	}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	id := uuid.NewString()
	spec := provider.Spec{
		SandboxID: id, RuntimeID: id, OrgID: uuid.NewString(), Instance: testenv.Instance(t), Image: testenv.TestImage,
		Resources: provider.Resources{CPUMillis: 500, MemoryMB: 128, PidsLimit: 128, DiskMB: 64, TmpMB: 32},
		Workspace: "pdkws-" + id, Network: provider.NetworkNone,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := p.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = p.Destroy(ctx, h)
		_ = p.RemoveWorkspace(ctx, spec.Workspace)
	})
	if err := p.Start(ctx, h); err != nil {
		t.Fatal(err)
	}
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) { return p.DialAgent(ctx, h) })
	t.Cleanup(func() { c.Close() })
	machineDocker := func(ctx context.Context, args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "docker", append([]string{"-H", m.Engine.Host}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	stop := func(t *testing.T) {
		ctx := ctxT(t)
		if out, err := machineDocker(ctx, "stop", "-t", "20", h.ID); err != nil {
			t.Fatalf("docker stop: %v %s", err, out)
		}
		code, err := machineDocker(ctx, "inspect", "-f", "{{.State.ExitCode}}", h.ID)
		if err != nil || code != "0" {
			t.Fatalf("exit code %q %v", code, err)
		}
	}
	midway := func(t *testing.T) {
		if n := m.DropConnections(t); n == 0 {
			t.Fatal("sshd served no connection to drop")
		}
		testenv.Eventually(t, func() error { return c.Health(ctxT(t)) })
	}
	testSandbox(t, &sandbox{id: h.ID, client: c, uid: "1000", home: provider.UserHome, stop: stop, midway: midway})
}
