package agentconn_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
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
	_, h, c := machineSandbox(t, sshprovider.Config{Name: "machine", DockerSocket: m.Socket}, m,
		provider.Resources{CPUMillis: 500, MemoryMB: 128, PidsLimit: 128, DiskMB: 64, TmpMB: 32})
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

// TestBareSSHSandbox runs the same agent checks on a machine in the ssh
// provider's bare mode: sshd only (the machine's engine is never used),
// the agent PID 1 of namespaces of its own as the machine's root, its
// workspace bound on /workspace. Midway, sshd drops the connection. The
// checks leave out the read-only root: a bare sandbox's root is the
// machine's. Stopping it (Destroy) ends every process of the sandbox,
// one that hid from the agent too.
func TestBareSSHSandbox(t *testing.T) {
	m := testenv.StartSSHHost(t)
	p, h, c := machineSandbox(t, sshprovider.Config{Name: "bare", Mode: sshprovider.ModeBare}, m, provider.Resources{})
	stop := func(t *testing.T) {
		ctx := ctxT(t)
		// A process that left the agent's group and dropped its mark.
		// (Its length in seconds tells it from every other sleep here.)
		mark := strconv.Itoa(1_000_000 + int(uuid.New().ID()%1_000_000))
		if _, err := c.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c",
			"setsid env -u PADDOCK_PROCESS /bin/sleep " + mark + " >/dev/null 2>&1 & until [ \"$(cat /proc/$!/comm)\" = sleep ]; do :; done"}}); err != nil {
			t.Fatal(err)
		}
		if !hostRuns("/bin/sleep", mark) {
			t.Fatal("the sandbox's sleep does not run on the machine")
		}
		if err := p.Destroy(ctx, h); err != nil {
			t.Fatal(err)
		}
		if hostRuns("sleep", mark) {
			t.Fatal("a process of the sandbox outlived its Destroy")
		}
		if _, err := p.Inspect(ctx, h); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("Inspect after Destroy = %v, want not found", err)
		}
	}
	midway := func(t *testing.T) {
		if n := m.DropConnections(t); n == 0 {
			t.Fatal("sshd served no connection to drop")
		}
		testenv.Eventually(t, func() error { return c.Health(ctxT(t)) })
	}
	testSandbox(t, &sandbox{id: h.ID, client: c, uid: "0", home: "/root", stop: stop, midway: midway, machineRoot: true})
	if out, err := exec.Command("docker", "-H", m.Engine.Host, "ps", "-aq").Output(); err != nil || len(out) != 0 {
		t.Fatalf("bare mode made containers on the machine's engine: %q %v", out, err)
	}
}

// hostRuns reports whether a live process of this host runs argv exactly
// (the test's machine shares this host's process table).
func hostRuns(argv ...string) bool {
	want := strings.Join(argv, "\x00") + "\x00"
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil || string(b) != want {
			continue
		}
		st, err := os.ReadFile(filepath.Join(filepath.Dir(f), "status"))
		if err == nil && !strings.Contains(string(st), "State:\tZ") {
			return true
		}
	}
	return false
}

// machineSandbox starts a sandbox of res on machine m through an ssh
// provider of cfg (its login, directories and timeouts filled in), and
// returns the provider, the sandbox and a client of its agent; all go
// when t ends. The sandbox's runtime id is its own id.
func machineSandbox(t *testing.T, cfg sshprovider.Config, m *testenv.SSHHost, res provider.Resources) (*sshprovider.Provider, provider.Handle, *agentconn.Client) {
	t.Helper()
	cfg.Address, cfg.User, cfg.KeyFile, cfg.HostKey = m.Addr, "root", m.KeyFile, m.HostKey
	cfg.RunDir, cfg.DiskDir = filepath.Join(m.Dir, "run"), filepath.Join(m.Dir, "disks")
	cfg.Instance, cfg.ShimPath = testenv.Instance(t), testenv.Binary(t, "paddock-shim")
	cfg.StartTimeout, cfg.KeepAlive = 30*time.Second, 2*time.Second
	p, err := sshprovider.New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	id := uuid.NewString()
	spec := provider.Spec{
		SandboxID: id, RuntimeID: id, OrgID: uuid.NewString(), Instance: cfg.Instance, Image: testenv.TestImage,
		Resources: res, Workspace: "pdkws-" + id, Network: provider.NetworkNone,
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
	c := newClient(func(ctx context.Context) (net.Conn, error) { return p.DialAgent(ctx, h) })
	t.Cleanup(func() { c.Close() })
	return p, h, c
}
