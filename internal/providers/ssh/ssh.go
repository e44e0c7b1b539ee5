// Package ssh is paddock's SSH provider: a machine reachable over SSH with
// a Docker engine is a sandbox host. A laptop, a bare-metal box or a
// rented GPU machine needs nothing but sshd and Docker.
//
// Every operation goes over one multiplexed SSH connection (Conn), whose
// host key is pinned. The Docker provider does the work: its engine client
// dials the machine's engine socket through the connection
// (direct-streamlocal), each agent's socket is dialled the same way, and
// what it does on its own host (the run directory, the agent's key, the
// shim, workspace disks) runs there as commands in sessions of the same
// connection (docker.Machine). What it cannot do there is declared absent
// in the capabilities: egress networks (only policy none is offered) and
// gVisor.
//
// In bare mode (Config.Mode, ModeBare) the machine needs sshd only: no
// Docker provider is made, and each sandbox's agent runs on the machine
// itself as PID 1 of namespaces of its own (bare.go).
package ssh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
)

// Codes this provider puts on its public errors, beside the Docker
// provider's.
const (
	// CodeUnreachable: the machine cannot be reached; the breaker counts
	// it as the backend being down.
	CodeUnreachable    = provider.CodeProviderUnavailable
	CodeHostKeyUnknown = "ssh_host_key_unknown"
	CodeHostKeyChanged = "ssh_host_key_changed"
	CodeAuthFailed     = "ssh_auth_failed"
	CodeInvalidConfig  = "invalid_ssh_config"
)

// Defaults of a Config.
const (
	DefaultDockerSocket = "/var/run/docker.sock"
	DefaultRunDir       = "/run/paddock"
	DefaultDiskDir      = "/var/lib/paddock/disks"
	DefaultDialTimeout  = 15 * time.Second
	DefaultKeepAlive    = 15 * time.Second
)

// Config configures a Provider.
type Config struct {
	// Name is the provider's registry name.
	Name string
	// Address is the machine's sshd, host:port (port 22 when left out).
	Address string
	// User is the account to log in as: root, or one that may use the
	// engine and do the host's steps (docker.Machine).
	User string
	// KeyFile is the private key to log in with (OpenSSH's format,
	// unencrypted); Key is the key itself, in its place.
	KeyFile string
	Key     []byte
	// HostKey pins the machine's host key (one line as authorized_keys
	// writes it); KnownHosts names a known_hosts file instead. One is
	// required.
	HostKey    string
	KnownHosts string
	// DockerSocket is the engine's socket on the machine.
	DockerSocket string
	// RunDir and DiskDir are the Docker provider's, on the machine.
	RunDir  string
	DiskDir string
	// Instance, ShimPath (the local shim, uploaded), PullMissing and
	// StartTimeout are the Docker provider's.
	Instance     string
	ShimPath     string
	PullMissing  bool
	StartTimeout time.Duration
	// DialTimeout bounds a connection's dial and handshake; KeepAlive is
	// how often a live connection is asked to answer (and how long it
	// may take).
	DialTimeout time.Duration
	KeepAlive   time.Duration
	// Mode is ModeContainer ("" too) or ModeBare: sandboxes as containers
	// on the machine's engine, or as supervised processes on the machine
	// itself (DockerSocket is then unused).
	Mode string
}

// Provider runs sandboxes as containers on a machine reached over SSH.
type Provider struct {
	d *docker.Provider // container mode's lifecycle, forwarded (forward.go)
	b *bare            // bare mode's, in d's place

	instance string

	name   string
	conn   *Conn
	logger *slog.Logger

	gpuMu sync.Mutex
	gpus  []string // the machine's GPUs, once asked (nil before)

	runDir string      // the run directory on the machine
	parked atomic.Bool // torn down (Teardown) and not used since
}

var (
	_ provider.Provider         = (*Provider)(nil)
	_ provider.Lister           = (*Provider)(nil)
	_ provider.WorkspaceRemover = (*Provider)(nil)
	_ provider.Snapshotter      = (*Provider)(nil)
	_ provider.Sizer            = (*Provider)(nil)
	_ provider.AgentLogger      = (*Provider)(nil)
)

// New returns a Provider for cfg. It checks the configuration and reads
// the key; it does not dial (Ping does).
func New(cfg Config, logger *slog.Logger) (*Provider, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cc, signer, addr, err := clientConfig(&cfg)
	if err != nil {
		return nil, errdefs.InvalidArgument(CodeInvalidConfig, "ssh provider %q: %s", cfg.Name, err.Error()).WithCause(err)
	}
	conn := NewConn(addr, cc, signer, cfg.KeepAlive, logger)
	p := &Provider{name: cfg.Name, conn: conn, logger: logger, runDir: cfg.RunDir, instance: cfg.Instance}
	if cfg.Mode == ModeBare {
		timeout := cfg.StartTimeout
		if timeout <= 0 {
			timeout = time.Minute
		}
		p.b = &bare{p: p, diskDir: cfg.DiskDir, shim: cfg.ShimPath, timeout: timeout}
		return p, nil
	}
	dp, err := docker.New(docker.Config{
		Name:         cfg.Name,
		Host:         "unix://" + cfg.DockerSocket,
		Instance:     cfg.Instance,
		ShimPath:     cfg.ShimPath,
		RunDir:       cfg.RunDir,
		DiskDir:      cfg.DiskDir,
		PullMissing:  cfg.PullMissing,
		StartTimeout: cfg.StartTimeout,
		Machine:      conn,
	}, logger)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	p.d = dp
	return p, nil
}

// clientConfig checks cfg, fills its defaults, and returns the SSH client
// configuration (without its auth methods: Conn adds them), the key to log
// in with, and the address to dial.
func clientConfig(cfg *Config) (*ssh.ClientConfig, ssh.Signer, string, error) {
	if cfg.Name == "" || cfg.Address == "" || cfg.User == "" || (cfg.KeyFile == "" && len(cfg.Key) == 0) {
		return nil, nil, "", errors.New("name, address, user and key_file are required")
	}
	switch cfg.Mode {
	case "":
		cfg.Mode = ModeContainer
	case ModeContainer:
	case ModeBare:
		if cfg.Instance == "" || cfg.ShimPath == "" {
			return nil, nil, "", errors.New("bare mode needs the instance and the agent binary (shim path)")
		}
	default:
		return nil, nil, "", fmt.Errorf("mode %q is not %s or %s", cfg.Mode, ModeContainer, ModeBare)
	}
	addr := cfg.Address
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "22")
	}
	signer, err := loginKey(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	check, algos, err := hostKeyCheck(cfg.HostKey, cfg.KnownHosts, addr)
	if err != nil {
		return nil, nil, "", err
	}
	cfg.DockerSocket = orDefault(cfg.DockerSocket, DefaultDockerSocket)
	cfg.RunDir = orDefault(cfg.RunDir, DefaultRunDir)
	cfg.DiskDir = orDefault(cfg.DiskDir, DefaultDiskDir)
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	return &ssh.ClientConfig{
		User:              cfg.User,
		HostKeyCallback:   check,
		HostKeyAlgorithms: algos,
		Timeout:           cfg.DialTimeout,
	}, signer, addr, nil
}

// loginKey reads the private key to log in with: Key, or KeyFile's.
func loginKey(cfg *Config) (ssh.Signer, error) {
	b, from := cfg.Key, "the key"
	if len(b) == 0 {
		var err error
		if b, err = os.ReadFile(cfg.KeyFile); err != nil {
			return nil, fmt.Errorf("the key file cannot be read: %w", err)
		}
		from = "the key file " + cfg.KeyFile
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s holds no usable private key (an unencrypted OpenSSH key is needed): %w", from, err)
	}
	return signer, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Close closes the engine client and the SSH connection.
func (p *Provider) Close() error {
	if p.b != nil {
		return p.conn.Close()
	}
	err := p.d.Close()
	if cerr := p.conn.Close(); err == nil {
		err = cerr
	}
	return err
}

// Ping checks that the machine answers over SSH and its engine answers,
// and asks the machine once for its GPUs.
func (p *Provider) Ping(ctx context.Context) error {
	if _, _, err := p.conn.client(ctx); err != nil {
		return err
	}
	if p.b != nil {
		if _, err := p.b.prepare(ctx); err != nil {
			return err
		}
	} else if err := p.d.Ping(ctx); err != nil {
		return err
	}
	_, err := p.GPUs(ctx)
	return err
}

// Capabilities are the Docker provider's on that machine (in bare mode:
// the machine's own isolation, "host", no pause or snapshots, networks
// none and open), with the GPUs it was found to have (once Ping asked).
func (p *Provider) Capabilities() provider.Capabilities {
	var c provider.Capabilities
	if p.b != nil {
		c = provider.Capabilities{Isolation: "host", Agent: true, Networks: slices.Clone(bareNetworks)}
	} else {
		c = p.d.Capabilities()
	}
	p.gpuMu.Lock()
	c.GPUs = p.gpus
	p.gpuMu.Unlock()
	return c
}

// GPUs asks the machine for its GPUs with nvidia-smi, once: a machine
// without nvidia-smi (or without a GPU it can see) has none.
func (p *Provider) GPUs(ctx context.Context) ([]string, error) {
	p.gpuMu.Lock()
	defer p.gpuMu.Unlock()
	if p.gpus != nil {
		return p.gpus, nil
	}
	out, err := p.conn.Run(ctx, nil, "sh", "-c",
		`if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi --query-gpu=name --format=csv,noheader || true; fi`)
	if err != nil {
		return nil, errdefs.Unavailable(CodeUnreachable, "the machine's GPUs cannot be listed").WithCause(err)
	}
	gpus := []string{}
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			gpus = append(gpus, l)
		}
	}
	p.gpus = gpus
	return gpus, nil
}
