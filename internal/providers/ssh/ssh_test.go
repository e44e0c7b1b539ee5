package ssh_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"
	"github.com/google/uuid"
	xssh "golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/provider/providertest"
	"github.com/paddockhq/paddock/internal/providers/ssh"
	"github.com/paddockhq/paddock/internal/testenv"
)

// machine is one SSHHost for a test, with the test image on its engine.
func machine(t *testing.T) *testenv.SSHHost {
	t.Helper()
	testenv.RequireDocker(t, testenv.TestImage)
	h := testenv.StartSSHHost(t)
	h.Engine.LoadImage(t, testenv.TestImage)
	return h
}

// config is a provider's configuration for h, pinning its host key.
func config(t *testing.T, h *testenv.SSHHost, name string) ssh.Config {
	return ssh.Config{
		Name:         name,
		Address:      h.Addr,
		User:         "root",
		KeyFile:      h.KeyFile,
		HostKey:      h.HostKey,
		DockerSocket: h.Socket,
		RunDir:       filepath.Join(h.Dir, "run"),
		DiskDir:      filepath.Join(h.Dir, "disks"),
		Instance:     testenv.Instance(t),
		ShimPath:     testenv.Binary(t, "paddock-shim"),
		StartTimeout: 30 * time.Second,
		KeepAlive:    2 * time.Second,
	}
}

// newProvider makes a provider from cfg, closed when t ends.
func newProvider(t *testing.T, cfg ssh.Config) *ssh.Provider {
	t.Helper()
	p, err := ssh.New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatalf("ssh provider: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func spec(instance string) provider.Spec {
	return provider.Spec{
		SandboxID: uuid.NewString(),
		RuntimeID: uuid.NewString(),
		OrgID:     uuid.NewString(),
		Instance:  instance,
		Image:     testenv.TestImage,
		Resources: provider.Resources{CPUMillis: 500, MemoryMB: 64, PidsLimit: 64, DiskMB: 32, TmpMB: 32},
		Workspace: "pdkws-" + uuid.NewString(),
		Network:   provider.NetworkNone,
	}
}

// TestConformance runs the provider conformance suite on a machine over
// SSH: an sshd and a Docker engine of their own in a network namespace.
func TestConformance(t *testing.T) {
	h := machine(t)
	cli, err := client.NewClientWithOpts(client.WithHost(h.Engine.Host), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	providertest.Run(t, providertest.Harness{
		New: func(t *testing.T) provider.Provider {
			return newProvider(t, config(t, h, "ssh"))
		},
		Spec: func(t *testing.T) provider.Spec { return spec(testenv.Instance(t)) },
		WorkspaceExists: func(t *testing.T, _ provider.Provider, name string) bool {
			_, err := cli.VolumeInspect(t.Context(), name)
			if err != nil && !cerrdefs.IsNotFound(err) {
				t.Fatalf("volume inspect: %v", err)
			}
			return err == nil
		},
	})
}

// started creates and starts a sandbox on p, destroyed when t ends.
func started(t *testing.T, p *ssh.Provider, instance string) provider.Handle {
	t.Helper()
	ctx := t.Context()
	s := spec(instance)
	hd, err := p.Create(ctx, s)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = p.Destroy(ctx, hd)
		_ = p.RemoveWorkspace(ctx, s.Workspace)
	})
	if err := p.Start(ctx, hd); err != nil {
		t.Fatalf("start: %v", err)
	}
	return hd
}

// agentAnswers asks the sandbox's agent for /healthz once.
func agentAnswers(ctx context.Context, p *ssh.Provider, hd provider.Handle) error {
	tr := provider.AgentTransport(func(ctx context.Context) (net.Conn, error) { return p.DialAgent(ctx, hd) })
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return provider.ProbeAgent(ctx, &http.Client{Transport: tr})
}

// TestLinkDropsAndReconnects ends the SSH connection under the provider
// (sshd's processes serving it are killed, so its TCP connection closes),
// and then stops sshd with its connections and starts it again: each time the provider dials anew, and
// the sandbox's agent and the engine are reachable again.
func TestLinkDropsAndReconnects(t *testing.T) {
	h := machine(t)
	p := newProvider(t, config(t, h, "ssh"))
	ctx := t.Context()
	hd := started(t, p, testenv.Instance(t))
	if err := agentAnswers(ctx, p, hd); err != nil {
		t.Fatalf("agent before the drop: %v", err)
	}

	if n := h.DropConnections(t); n == 0 {
		t.Fatal("sshd served no connection to drop")
	}
	testenv.Eventually(t, func() error { return agentAnswers(ctx, p, hd) })
	st, err := p.Inspect(ctx, hd)
	if err != nil || st.State != provider.StateRunning {
		t.Fatalf("after the drop: %v, %v", st, err)
	}

	h.StopSSHD(t)
	if err := p.Ping(ctx); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("ping with sshd down = %v, want unavailable", err)
	}
	h.StartSSHD(t)
	testenv.Eventually(t, func() error { return p.Ping(ctx) })
	if err := agentAnswers(ctx, p, hd); err != nil {
		t.Fatalf("agent after sshd restarted: %v", err)
	}
	if err := p.Pause(ctx, hd); err != nil {
		t.Fatalf("pause after the reconnect: %v", err)
	}
	if err := p.Resume(ctx, hd); err != nil {
		t.Fatalf("resume after the reconnect: %v", err)
	}
	if err := agentAnswers(ctx, p, hd); err != nil {
		t.Fatalf("agent after resume: %v", err)
	}
}

// TestHostKeyPinned refuses a machine whose host key is not the pinned
// one, or that the known_hosts file does not know, before anything runs
// there; a known_hosts file that knows it is accepted. A key the machine
// does not take is said as such.
func TestHostKeyPinned(t *testing.T) {
	h := machine(t)
	ctx := t.Context()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := xssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.TrimSpace(string(xssh.MarshalAuthorizedKey(otherKey)))

	changed := config(t, h, "ssh")
	changed.HostKey = other
	err = newProvider(t, changed).Ping(ctx)
	if pe, ok := errdefs.Public(err); !ok || pe.Code != ssh.CodeHostKeyChanged || !strings.Contains(pe.Message, "SHA256:") {
		t.Fatalf("ping with another key pinned = %v, want %s naming the key shown", err, ssh.CodeHostKeyChanged)
	}

	dir := t.TempDir()
	unknown := config(t, h, "ssh")
	unknown.HostKey, unknown.KnownHosts = "", filepath.Join(dir, "unknown")
	if err := os.WriteFile(unknown.KnownHosts, []byte("10.0.0.1 "+h.HostKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = newProvider(t, unknown).Ping(ctx)
	if pe, ok := errdefs.Public(err); !ok || pe.Code != ssh.CodeHostKeyUnknown {
		t.Fatalf("ping with the machine unknown = %v, want %s", err, ssh.CodeHostKeyUnknown)
	}

	known := config(t, h, "ssh")
	known.HostKey, known.KnownHosts = "", filepath.Join(dir, "known")
	host, _, _ := strings.Cut(h.Addr, ":")
	if err := os.WriteFile(known.KnownHosts, []byte(host+" "+h.HostKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := newProvider(t, known).Ping(ctx); err != nil {
		t.Fatalf("ping with the machine known: %v", err)
	}

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := xssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	stranger := config(t, h, "ssh")
	stranger.KeyFile = filepath.Join(dir, "stranger")
	if err := os.WriteFile(stranger.KeyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	err = newProvider(t, stranger).Ping(ctx)
	if pe, ok := errdefs.Public(err); !ok || pe.Code != ssh.CodeAuthFailed {
		t.Fatalf("ping with a key the machine does not know = %v, want %s", err, ssh.CodeAuthFailed)
	}

	none := config(t, h, "ssh")
	none.HostKey = ""
	if _, err := ssh.New(none, nil); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("a config pinning no host key = %v, want invalid", err)
	}
}

// TestCapabilitiesFollowTheMachine: the machine's GPUs are asked of
// nvidia-smi there; this one has none, and says so; the network policies
// offered are none only (egress networks are the server host's).
func TestCapabilitiesFollowTheMachine(t *testing.T) {
	h := machine(t)
	p := newProvider(t, config(t, h, "gpu-box"))
	if err := p.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	gpus, err := p.GPUs(t.Context())
	if err != nil || gpus == nil || len(gpus) != 0 {
		t.Fatalf("GPUs = %q, %v; want none found", gpus, err)
	}
	c := p.Capabilities()
	if c.Isolation != "container" || !c.Agent || !c.Pause || !c.Snapshot {
		t.Errorf("capabilities = %+v", c)
	}
	if len(c.Networks) != 1 || c.Networks[0] != provider.NetworkNone {
		t.Errorf("networks = %v, want none only", c.Networks)
	}
	if p.Name() != "gpu-box" {
		t.Errorf("name = %q", p.Name())
	}
	if _, ok := any(p).(provider.Networker); ok {
		t.Error("the ssh provider offers egress networks it cannot set up")
	}
	res, err := p.Capacity(t.Context())
	if err != nil || res.CPUMillis <= 0 || res.MemoryMB <= 0 {
		t.Errorf("capacity = %+v, %v", res, err)
	}
}

// TestMachineLosesItsRunDirectory: a machine that rebooted lost its run
// directory (a tmpfs) with the shim in it, while the provider's link came
// back; the next sandbox prepares the machine again rather than failing
// until the server restarts.
func TestMachineLosesItsRunDirectory(t *testing.T) {
	h := machine(t)
	cfg := config(t, h, "ssh")
	p := newProvider(t, cfg)
	started(t, p, cfg.Instance)
	// The machine is a network namespace of this host: its run directory
	// is a directory here.
	if err := os.RemoveAll(cfg.RunDir); err != nil {
		t.Fatal(err)
	}
	hd := started(t, p, cfg.Instance)
	if err := agentAnswers(t.Context(), p, hd); err != nil {
		t.Fatalf("the agent of a sandbox made after the run directory went: %v", err)
	}
}
