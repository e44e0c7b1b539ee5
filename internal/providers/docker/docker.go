// Package docker is paddock's Docker provider: each sandbox is a hardened
// container on the local (or configured) Docker engine.
//
// A container is created, never started, by Create; it is hardened by
// default (every capability dropped, no-new-privileges, PID, memory and CPU
// limits, a read-only root with a writable /tmp tmpfs and the workspace
// volume at /workspace, no network). The in-sandbox agent, paddock-shim, is
// bind-mounted read-only from the host and runs as PID 1; it listens on a
// unix socket in a per-sandbox host directory bind-mounted at /.paddock/run,
// so the control plane reaches it without any network.
//
// Every container and volume carries the standard provider labels, so an
// installation can find what it owns (List) and nothing else is touched:
// operations on a container that lacks the managed label, or that another
// provider on the same engine made, answer not found.
//
// With Config.Runtime "runsc" the same sandboxes run under gVisor; what
// that changes is described in gvisor.go.
package docker

import (
	"context"
	"debug/elf"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/client"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// Name is the provider's registry name unless its Config names it.
const Name = "docker"

// Paths inside every sandbox.
const (
	shimTarget   = "/.paddock/bin/paddock-shim"
	runTarget    = "/.paddock/run"
	socketName   = "agent.sock"
	agentSocket  = runTarget + "/" + socketName
	keyTarget    = runTarget + "/" + agentauth.KeyFileName
	trustName    = "trust.pem"
	trustTarget  = runTarget + "/" + trustName
	shortIDLen   = 12
	runDirIDLen  = 16  // random hex name of a sandbox's run directory
	maxSocketLen = 107 // sun_path is 108 bytes including the terminating NUL
)

// maxRunDirLen is the longest RunDir whose socket paths
// (<RunDir>/<run dir id>/agent.sock) still fit in a sockaddr_un.
const maxRunDirLen = maxSocketLen - len("/") - runDirIDLen - len("/"+socketName)

// Defaults applied when a Spec leaves a resource at zero.
const (
	DefaultPidsLimit    = 256
	DefaultMemoryMB     = 1024
	DefaultCPUMillis    = 1000
	DefaultTmpMB        = 512
	DefaultStartTimeout = 15 * time.Second
)

// TmpMemoryDivisor bounds /tmp and /dev/shm (tmpfs both, counted against
// the memory limit) each to this fraction of the memory limit, whatever
// TmpMB asks: what they hold no OOM kill frees, so together they leave at
// least half the memory to processes and the agent.
const TmpMemoryDivisor = 4

// Config configures a Provider.
type Config struct {
	// Name is the provider's registry name; "" means Name ("docker"). Two
	// providers on one engine (runc and gVisor) need different names: each
	// labels its compute with it and lists only its own.
	Name string
	// Host is the engine's address; "" means DOCKER_HOST or
	// unix:///var/run/docker.sock.
	Host string
	// Instance is the installation id put on every container and volume
	// (provider.LabelInstance) when a Spec does not name one.
	Instance string
	// ShimPath is the host path of the static paddock-shim binary.
	ShimPath string
	// RunDir is the host directory under which each sandbox gets its own
	// socket directory. It must be short: unix socket paths are limited to
	// 107 bytes.
	RunDir string
	// DiskDir is the host directory that holds every workspace's disk
	// image and its mount (see quota.go). Required: no workspace is made
	// without a quota.
	DiskDir string
	// PullMissing pulls an image that is not present locally. When false
	// (as in tests) a missing image fails Create with image_not_found.
	PullMissing bool
	// Runtime is the OCI runtime ("" = the engine's default, "runsc" for
	// gVisor).
	Runtime string
	// StartTimeout bounds how long Start waits for the agent; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// Networks, when set, offers the proxy and open egress modes (see
	// network.go); without it sandboxes have no network at all.
	Networks *Networks
	// WritableRootUnbounded allows writable roots on an engine that cannot
	// bound their size (only overlay2 over xfs with project quotas can):
	// their writes then land on the engine's storage outside any quota.
	WritableRootUnbounded bool
	// Machine, when set, is the engine's host reached from afar (the ssh
	// provider): the engine's API (at Host, a unix:// socket there) and
	// the agents' sockets are dialled through it, RunDir and DiskDir are
	// paths there, and what the provider does on its host is done there
	// by commands (see machine.go). Networks are not offered on it.
	Machine Machine

	shimSource string // the copy of ShimPath that sandboxes mount
}

// Provider runs sandboxes as Docker containers. It is safe for concurrent
// use.
type Provider struct {
	cfg    Config
	cli    *client.Client
	logger *slog.Logger
	// machine is the engine's host: this one, or Config.Machine.
	machine host

	prepMu sync.Mutex // prepareMachine

	pidMu sync.Mutex
	pids  map[string]int // container id -> host pid of its init (the agent)

	capMu    sync.Mutex
	capacity *provider.Resources // the host's, once asked

	disks diskLocks // per workspace volume: mounting and releasing its disk

	nets         atomic.Pointer[Networks] // set once SetupNetworks succeeded: proxy and open are offered, on these
	runtimeKnown atomic.Bool              // the engine knows Config.Runtime (checkRuntime)
	// rootQuota: the engine's storage can bound a container's writable
	// layer (overlay2 over xfs); learnt with the host's capacity.
	rootQuota atomic.Bool
	// runDir is this server's use of the run directory (ReleaseRunDir).
	runDir *runDirUse
	// afterDiskMount, set by tests only, runs in Create between mounting
	// the workspace's disk and making the container.
	afterDiskMount func()
	seen           *seenImages // what CheckImage found on the engine
}

var (
	_ provider.Provider         = (*Provider)(nil)
	_ provider.Lister           = (*Provider)(nil)
	_ provider.WorkspaceRemover = (*Provider)(nil)
	_ provider.Snapshotter      = (*Provider)(nil)
	_ provider.Sizer            = (*Provider)(nil)
	_ provider.AgentLogger      = (*Provider)(nil)
	_ provider.Networker        = (*Provider)(nil)
)

// New returns a Provider. It does not contact the engine (see Ping); it
// checks the configuration and creates RunDir if needed.
func New(cfg Config, logger *slog.Logger) (*Provider, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.ShimPath == "" {
		return nil, errdefs.InvalidArgument("shim_path_required", "the docker provider needs the path of the paddock-shim binary")
	}
	shim, err := filepath.Abs(cfg.ShimPath)
	if err != nil {
		return nil, errdefs.InvalidArgument("invalid_shim_path", "the paddock-shim path is not valid").WithCause(err)
	}
	fi, err := os.Stat(shim)
	if err != nil || !fi.Mode().IsRegular() {
		if err == nil {
			err = fmt.Errorf("%s is not a regular file", shim)
		}
		return nil, errdefs.InvalidArgument("invalid_shim_path", "the paddock-shim binary %q cannot be used", shim).WithCause(err)
	}
	if err := checkStatic(shim); err != nil {
		return nil, err
	}
	cfg.ShimPath = shim

	if cfg.RunDir == "" {
		return nil, errdefs.InvalidArgument("run_dir_required", "the docker provider needs a run directory for agent sockets")
	}
	runDir, err := filepath.Abs(cfg.RunDir)
	if err != nil {
		return nil, errdefs.InvalidArgument("invalid_run_dir", "the run directory is not valid").WithCause(err)
	}
	if len(runDir) > maxRunDirLen {
		return nil, errdefs.InvalidArgument("run_dir_too_long",
			"the run directory %q is %d bytes long; agent socket paths must fit in %d bytes, so it may be at most %d bytes",
			runDir, len(runDir), maxSocketLen, maxRunDirLen)
	}
	cfg.RunDir = runDir

	if cfg.DiskDir == "" {
		return nil, errdefs.InvalidArgument("disk_dir_required", "the docker provider needs a directory for workspace disks")
	}
	diskDir, err := filepath.Abs(cfg.DiskDir)
	if err != nil {
		return nil, errdefs.InvalidArgument("invalid_disk_dir", "the workspace disk directory is not valid").WithCause(err)
	}
	cfg.DiskDir = diskDir
	if cfg.Machine != nil {
		return newRemote(cfg, logger)
	}
	if err := os.MkdirAll(diskDir, 0o700); err != nil {
		return nil, errdefs.FailedPrecondition("disk_dir_unusable", "the workspace disk directory %q cannot be created", diskDir).WithCause(err)
	}

	opts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if cfg.Host != "" {
		opts = append(opts, client.WithHost(cfg.Host))
	}
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, errdefs.InvalidArgument("invalid_docker_host", "the Docker engine address is not valid").WithCause(err)
	}
	use, err := prepareRunDir(&cfg, logger)
	if err != nil {
		cli.Close()
		return nil, err
	}
	return &Provider{cfg: cfg, cli: cli, logger: logger, machine: localHost{}, pids: map[string]int{}, runDir: use, seen: seenImagesOn(cli.DaemonHost())}, nil
}

// newRemote is New for an engine on cfg.Machine: its client dials the
// engine's socket there, and the run and disk directories are made there
// (the shim uploaded) when the provider is first used (Ping, Create).
func newRemote(cfg Config, logger *slog.Logger) (*Provider, error) {
	if cfg.Runtime != "" || cfg.Networks != nil {
		return nil, errdefs.InvalidArgument("invalid_machine_config", "an engine reached from afar offers neither another OCI runtime nor network modes")
	}
	sock := "/var/run/docker.sock"
	if cfg.Host != "" {
		var ok bool
		if sock, ok = strings.CutPrefix(cfg.Host, "unix://"); !ok || !filepath.IsAbs(sock) {
			return nil, errdefs.InvalidArgument("invalid_docker_host", "the engine's socket on the machine must be unix:///absolute/path, not %q", cfg.Host)
		}
	}
	m := cfg.Machine
	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+sock), client.WithAPIVersionNegotiation(),
		client.WithDialContext(func(ctx context.Context, _, _ string) (net.Conn, error) { return m.DialUnix(ctx, sock) }))
	if err != nil {
		return nil, errdefs.InvalidArgument("invalid_docker_host", "the Docker engine address is not valid").WithCause(err)
	}
	return &Provider{cfg: cfg, cli: cli, logger: logger, machine: remoteHost{m}, pids: map[string]int{}, seen: &seenImages{ttl: seenImagesFor}}, nil
}

// prepareMachine makes the run and disk directories on the remote
// machine and uploads the shim there: until it succeeds, every Ping and
// Create tries again, and once it has, each checks the shim is still
// there (a machine that rebooted lost its run directory with its tmpfs)
// and prepares the machine again when it is not.
func (p *Provider) prepareMachine(ctx context.Context) error {
	if p.cfg.Machine == nil {
		return nil
	}
	p.prepMu.Lock()
	defer p.prepMu.Unlock()
	if p.cfg.shimSource != "" {
		ok, err := remoteHost{p.cfg.Machine}.exists(ctx, p.cfg.shimSource)
		if err != nil {
			return errdefs.Unavailable(CodeProviderError, "the machine does not answer").WithCause(err)
		}
		if ok {
			return nil
		}
		p.logger.Warn("the shim is gone from the machine's run directory (a reboot?): preparing the machine again", "run_dir", p.cfg.RunDir)
		p.cfg.shimSource = ""
	}
	if _, err := p.cfg.Machine.Run(ctx, nil, "mkdir", "-p", "-m", "0700", "--", p.cfg.DiskDir); err != nil {
		return errdefs.Unavailable(CodeProviderError, "the workspace disk directory %q cannot be made on the machine", p.cfg.DiskDir).WithCause(err)
	}
	src, err := prepareRemoteRunDir(ctx, p.cfg.Machine, p.cfg.RunDir, p.cfg.ShimPath)
	if err != nil {
		return errdefs.Unavailable(CodeProviderError, "the run directory %q cannot be prepared on the machine", p.cfg.RunDir).WithCause(err)
	}
	p.cfg.shimSource = src
	return nil
}

// Close releases the engine client's connections and the run directory
// (its tmpfs stays mounted: sandboxes and other servers use it).
func (p *Provider) Close() error {
	if p.runDir != nil {
		_ = p.runDir.dir.Close()
	}
	return p.cli.Close()
}

// Ping checks that the engine answers, and knows the configured runtime,
// for readiness probes.
func (p *Provider) Ping(ctx context.Context) error {
	if _, err := p.cli.Ping(ctx); err != nil {
		return engineErr("reach", err)
	}
	if err := p.prepareMachine(ctx); err != nil {
		return err
	}
	return p.checkRuntime(ctx)
}

// Name returns the provider's registry name.
func (p *Provider) Name() string {
	if p.cfg.Name != "" {
		return p.cfg.Name
	}
	return Name
}

// Capabilities declares container isolation (gVisor when the runtime is
// runsc), pause, the agent, snapshots, and the network modes it offers.
func (p *Provider) Capabilities() provider.Capabilities {
	iso := "container"
	if p.gvisor() {
		iso = "gvisor"
	}
	return provider.Capabilities{
		Isolation: iso,
		Pause:     true,
		Agent:     true,
		Networks:  p.offeredNetworks(),
		Snapshot:  true,
		// Known once the engine was asked (Capacity); the runtime service
		// checks after asking.
		WritableRoot: p.cfg.WritableRootUnbounded || p.rootQuota.Load(),
	}
}

// shortID is the part of a sandbox id used in container names and socket
// directories.
func shortID(sandboxID string) string {
	if len(sandboxID) > shortIDLen {
		return sandboxID[:shortIDLen]
	}
	return sandboxID
}

// containerName is the name of a sandbox's container.
func containerName(sandboxID string) string { return "paddock-" + shortID(sandboxID) }

// Capacity reports the engine host's cores and memory: no sandbox can have
// more. It asks the engine once and remembers the answer.
func (p *Provider) Capacity(ctx context.Context) (provider.Resources, error) {
	p.capMu.Lock()
	defer p.capMu.Unlock()
	if p.capacity != nil {
		return *p.capacity, nil
	}
	info, err := p.cli.Info(ctx)
	if err != nil {
		return provider.Resources{}, engineErr("inspect the host of", err)
	}
	c := provider.Resources{CPUMillis: int64(info.NCPU) * 1000, MemoryMB: info.MemTotal >> 20}
	p.capacity = &c
	p.rootQuota.Store(info.Driver == "overlay2" && slices.Contains(info.DriverStatus, [2]string{"Backing Filesystem", "xfs"}))
	return c, nil
}

// checkStatic refuses a shim that is not a statically linked ELF binary:
// the sandbox image has none of the host's libraries, so a dynamic shim
// fails every start with "exec /.paddock/bin/paddock-shim: no such file or
// directory".
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return errdefs.InvalidArgument(CodeShimNotStatic, "the paddock-shim binary %q is not an ELF executable", path).WithCause(err)
	}
	defer f.Close()
	dynamic := false
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			dynamic = true
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		dynamic = true
	}
	if dynamic {
		return errdefs.InvalidArgument(CodeShimNotStatic,
			"the paddock-shim binary %q is dynamically linked, so it cannot run inside a sandbox; build it static: CGO_ENABLED=0 go build -o bin/paddock-shim ./cmd/paddock-shim (scripts/build.sh does this)", path)
	}
	return nil
}
