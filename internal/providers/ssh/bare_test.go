package ssh_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/provider/providertest"
	"github.com/paddockhq/paddock/internal/providers/ssh"
	"github.com/paddockhq/paddock/internal/testenv"
)

// bareConfig is a bare-mode provider's configuration for h.
func bareConfig(t *testing.T, h *testenv.SSHHost, name string) ssh.Config {
	cfg := config(t, h, name)
	cfg.Mode = ssh.ModeBare
	cfg.DockerSocket = ""
	return cfg
}

// barePid is the pid of the process that holds the bare sandbox hd's
// namespaces: the first field of its pid file (the start time follows).
func barePid(t *testing.T, cfg ssh.Config, hd provider.Handle) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cfg.RunDir, "bare", hd.ID, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	return pid
}

// noContainers fails t if the machine's engine has any container: bare
// mode never uses it.
func noContainers(t *testing.T, h *testenv.SSHHost) {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.WithHost(h.Engine.Host), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	cs, err := cli.ContainerList(t.Context(), container.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 0 {
		t.Fatalf("bare mode made %d containers on the machine's engine", len(cs))
	}
}

// TestBareConformance runs the provider conformance suite on a machine in
// bare mode: each sandbox's agent is a process there, and its workspace a
// directory. The machine has a Docker engine, which bare mode must not
// use: no container is made on it.
func TestBareConformance(t *testing.T) {
	h := testenv.StartSSHHost(t)
	disks := filepath.Join(h.Dir, "disks", "bare")
	providertest.Run(t, providertest.Harness{
		New: func(t *testing.T) provider.Provider {
			return newProvider(t, bareConfig(t, h, "ssh-bare"))
		},
		Spec: func(t *testing.T) provider.Spec { return spec(testenv.Instance(t)) },
		WorkspaceExists: func(t *testing.T, _ provider.Provider, name string) bool {
			_, err := os.Stat(filepath.Join(disks, name))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			return err == nil
		},
	})
	noContainers(t, h)
}

// TestBareSandbox: a bare sandbox's processes see its workspace directory
// at /workspace (a bind mount in a mount namespace of their own, made on
// the machine's root when missing), are in a PID namespace of their own
// whose init is the agent, and, with network none, have only loopback.
// With network open it has the machine's network. Capabilities say so:
// host isolation, no pause, networks none and open.
func TestBareSandbox(t *testing.T) {
	h := testenv.StartSSHHost(t)
	bareSandbox(t, h)
	noContainers(t, h)
}

func bareSandbox(t *testing.T, h *testenv.SSHHost) {
	cfg := bareConfig(t, h, "ssh-bare")
	p := newProvider(t, cfg)
	if err := p.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := p.Capabilities()
	if c.Isolation != "host" || c.Pause || c.Snapshot || !c.Agent || len(c.Networks) != 2 {
		t.Fatalf("capabilities = %+v", c)
	}
	s := spec(cfg.Instance)
	s.Env = map[string]string{"BARE_SECRET": "it's a\nsecret"}
	hd := startedSpec(t, p, s)
	ws := filepath.Join(cfg.DiskDir, "bare", s.Workspace)
	// The spec's environment is the agent's, and on no command line of
	// the machine's (the sandbox's process lives as long as it does).
	if out := execIn(t, p, hd, `printf %s "$BARE_SECRET"`); out != "it's a\nsecret" {
		t.Errorf("the sandbox's environment has BARE_SECRET=%q", out)
	}
	dir := filepath.Join(cfg.RunDir, "bare", hd.ID)
	cmdline, err := os.ReadFile("/proc/" + barePid(t, cfg, hd) + "/cmdline")
	if err != nil || strings.Contains(string(cmdline), "secret") || !strings.Contains(string(cmdline), "unshare") {
		t.Errorf("the sandbox's process has the command line %q (%v)", cmdline, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "env.sh")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the environment's file was left in the run directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(ws, "seen"), []byte("from the machine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := execIn(t, p, hd, "cat /workspace/seen"); out != "from the machine" {
		t.Errorf("the sandbox sees %q at /workspace/seen, want its workspace's file", out)
	}
	if out := execIn(t, p, hd, "tr '\\0' ' ' </proc/1/cmdline"); !strings.Contains(out, "paddock-shim") || !strings.Contains(out, " serve ") {
		t.Errorf("the sandbox's PID 1 is %q, not its agent", out)
	}
	// (/sys is the machine's: it shows the machine's interfaces.)
	if out := execIn(t, p, hd, `ip -o link show | awk -F': ' '{print $2}'`); !slices.Equal(strings.Fields(out), []string{"lo"}) {
		t.Errorf("network none: the sandbox sees interfaces %q, want lo only", out)
	}
	if out := execIn(t, p, hd, "ip -o link show lo"); !strings.Contains(out, ",UP") {
		t.Errorf("network none: the sandbox's loopback is down: %q", out)
	}
	// The mount is the sandbox's alone: the machine's /workspace does not
	// show the file.
	if _, err := os.Stat("/workspace/seen"); err == nil {
		t.Error("the sandbox's workspace mount shows on the machine")
	}
	if err := p.Pause(t.Context(), hd); !errors.Is(err, errdefs.ErrNotImplemented) {
		t.Errorf("pause in bare mode = %v, want not implemented", err)
	}

	// Network open is the machine's own network: its interfaces beside lo.
	open := spec(cfg.Instance)
	open.Network = provider.NetworkOpen
	ho := startedSpec(t, p, open)
	if out := execIn(t, p, ho, `ip -o link show | awk -F': ' '{print $2}'`); len(strings.Fields(out)) < 2 {
		t.Errorf("network open: the sandbox sees interfaces %q, want the machine's", out)
	}
}

// startedSpec creates and starts a sandbox of s on p, destroyed (and its
// workspace removed) when t ends.
func startedSpec(t *testing.T, p *ssh.Provider, s provider.Spec) provider.Handle {
	t.Helper()
	hd, err := p.Create(t.Context(), s)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Destroy(ctx, hd); err != nil {
			t.Errorf("destroy: %v", err)
		}
		if err := p.RemoveWorkspace(ctx, s.Workspace); err != nil {
			t.Errorf("remove the workspace: %v", err)
		}
	})
	if err := p.Start(t.Context(), hd); err != nil {
		t.Fatalf("start: %v", err)
	}
	return hd
}

// execIn runs script with sh in the sandbox and returns its output.
func execIn(t *testing.T, p *ssh.Provider, hd provider.Handle, script string) string {
	t.Helper()
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) { return p.DialAgent(ctx, hd) })
	defer c.Close()
	res, err := c.Run(t.Context(), agentconn.ExecRequest{Argv: []string{"sh", "-c", script}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	if res.Exit.Code != 0 {
		t.Fatalf("exec %q exited %d: %s%s", script, res.Exit.Code, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

// TestBareLinkDropsAndReconnects: in bare mode too, a link that drops
// (sshd's processes serving it killed) and sshd stopped and started again
// leave the sandbox running, and its agent answers over the new link.
func TestBareLinkDropsAndReconnects(t *testing.T) {
	h := testenv.StartSSHHost(t)
	cfg := bareConfig(t, h, "ssh-bare")
	p := newProvider(t, cfg)
	ctx := t.Context()
	hd := startedSpec(t, p, spec(cfg.Instance))
	if err := agentAnswers(ctx, p, hd); err != nil {
		t.Fatalf("agent before the drop: %v", err)
	}
	if n := h.DropConnections(t); n == 0 {
		t.Fatal("sshd served no connection to drop")
	}
	testenv.Eventually(t, func() error { return agentAnswers(ctx, p, hd) })
	h.StopSSHD(t)
	if err := p.Ping(ctx); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("ping with sshd down = %v, want unavailable", err)
	}
	h.StartSSHD(t)
	testenv.Eventually(t, func() error { return p.Ping(ctx) })
	if err := agentAnswers(ctx, p, hd); err != nil {
		t.Fatalf("agent after sshd restarted: %v", err)
	}
	st, err := p.Inspect(ctx, hd)
	if err != nil || st.State != provider.StateRunning {
		t.Fatalf("after the reconnect: %+v, %v", st, err)
	}
}

// TestBareOutlivesTheServer: a bare sandbox is found on the machine by a
// new provider (a restarted server), listed with its labels and running;
// Destroy through the listed handle ends its processes, a detached one
// (its own session) among them.
func TestBareOutlivesTheServer(t *testing.T) {
	h := testenv.StartSSHHost(t)
	bareOutlivesTheServer(t, h)
	noContainers(t, h)
}

func bareOutlivesTheServer(t *testing.T, h *testenv.SSHHost) {
	cfg := bareConfig(t, h, "ssh-bare")
	first := newProvider(t, cfg)
	s := spec(cfg.Instance)
	again := newProvider(t, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := again.RemoveWorkspace(ctx, s.Workspace); err != nil {
			t.Errorf("remove the workspace: %v", err)
		}
	})
	hd, err := first.Create(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = again.Destroy(context.Background(), hd) })
	if err := first.Start(t.Context(), hd); err != nil {
		t.Fatal(err)
	}
	pid := barePid(t, cfg, hd)
	// A background process that left its session and process group: the
	// PID namespace holds it still.
	mark := fmt.Sprintf("%d", 100000+time.Now().UnixNano()%900000)
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) { return first.DialAgent(ctx, hd) })
	es, err := c.Exec(t.Context(), agentconn.ExecRequest{Argv: []string{"setsid", "sleep", mark}, Background: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = es.Close()
	_ = c.Close()
	testenv.Eventually(t, func() error {
		if !sleeping(mark) {
			return errors.New("the sandbox's detached process is not running on the machine")
		}
		return nil
	})
	_ = first.Close()

	listed, err := again.List(t.Context(), cfg.Instance)
	if err != nil || len(listed) != 1 || listed[0].Handle.ID != hd.ID {
		t.Fatalf("list after the restart = %+v, %v", listed, err)
	}
	if l := listed[0]; l.Status.State != provider.StateRunning || l.Labels[provider.LabelSandbox] != s.SandboxID {
		t.Fatalf("listed = %+v", l)
	}
	if err := again.Destroy(t.Context(), listed[0].Handle); err != nil {
		t.Fatal(err)
	}
	// Gone, or a zombie its new parent has yet to reap.
	if st, err := os.ReadFile("/proc/" + pid + "/status"); err == nil && !strings.Contains(string(st), "State:\tZ") {
		t.Fatalf("the sandbox's process %s outlived Destroy", pid)
	}
	if _, err := again.Inspect(t.Context(), hd); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("inspect after destroy = %v, want not found", err)
	}
	testenv.Eventually(t, func() error {
		if sleeping(mark) {
			return errors.New("the sandbox's detached process outlived Destroy")
		}
		return nil
	})
}

// sleeping reports whether a live process of this host (the machine's)
// runs sleep with the argument mark.
func sleeping(mark string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil || string(b) != "sleep\x00"+mark+"\x00" {
			continue
		}
		st, err := os.ReadFile(filepath.Join(filepath.Dir(f), "status"))
		if err == nil && !strings.Contains(string(st), "State:\tZ") {
			return true
		}
	}
	return false
}

// TestBareNeedsRoot: an account other than root (sshd runs the
// sessions as nobody) is refused with ssh_bare_needs_root (422) by Ping
// and Create, and nothing is made on the machine.
func TestBareNeedsRoot(t *testing.T) {
	h := testenv.StartSSHHost(t)
	h.RunAs(t, 65534)
	bareNeedsRoot(t, h)
}

func bareNeedsRoot(t *testing.T, h *testenv.SSHHost) {
	cfg := bareConfig(t, h, "ssh-bare")
	p := newProvider(t, cfg)
	for what, err := range map[string]error{
		"ping":   p.Ping(t.Context()),
		"create": func() error { _, err := p.Create(t.Context(), spec(cfg.Instance)); return err }(),
	} {
		if pe, ok := errdefs.Public(err); !ok || pe.Code != ssh.CodeBareNeedsRoot || !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Errorf("%s = %v, want %s", what, err, ssh.CodeBareNeedsRoot)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.RunDir, "bare")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused create left the sandboxes' directory: %v", err)
	}
}

// TestBareAgentDies: a sandbox whose process was killed on the machine is
// stopped, saying its agent exited; Start runs it again, and its agent
// answers.
func TestBareAgentDies(t *testing.T) {
	h := testenv.StartSSHHost(t)
	cfg := bareConfig(t, h, "ssh-bare")
	p := newProvider(t, cfg)
	hd := startedSpec(t, p, spec(cfg.Instance))
	pid, err := strconv.Atoi(barePid(t, cfg, hd))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		st, err := p.Inspect(t.Context(), hd)
		if err != nil || st.State != provider.StateStopped || st.Error == "" {
			return fmt.Errorf("inspect after the kill = %+v, %v", st, err)
		}
		return nil
	})
	if _, err := p.DialAgent(t.Context(), hd); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("dial a stopped sandbox's agent = %v, want unavailable", err)
	}
	if err := p.Start(t.Context(), hd); err != nil {
		t.Fatalf("start again: %v", err)
	}
	if err := agentAnswers(t.Context(), p, hd); err != nil {
		t.Fatalf("the agent started again: %v", err)
	}
}
