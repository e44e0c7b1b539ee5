package host

import (
	"context"
	"net"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// Spec is a machine to register: its name in the org, sshd's address
// (host, or host:port), the account and its private key (OpenSSH's
// format, unencrypted), the host key pinned (one line as authorized_keys
// writes it), and optionally the engine's socket and the provider's
// directories on the machine (the ssh provider's defaults otherwise).
type Spec struct {
	Name, Address, User string
	PrivateKey          []byte
	HostKey             string
	DockerSocket        string
	RunDir, DiskDir     string
	// IdleTeardown (0: never) and TeardownCommand: see store.Host.
	IdleTeardown    time.Duration
	TeardownCommand string
	// CostPerHourMicros bills each sandbox on it by the hour instead of
	// by its resources (0: by its resources).
	CostPerHourMicros int64
	// Mode is store.HostContainer ("" too): a Docker engine on the
	// machine runs its sandboxes; or store.HostBare: sshd only, logged in
	// as root, each sandbox the agent in namespaces of its own.
	Mode store.HostMode
}

// MaxTeardownCommand bounds a teardown command's length.
const MaxTeardownCommand = 4096

// Add registers the machine spec for orgID, by createdBy: it checks the
// spec, connects (the host key, the login, the engine), seals the key and
// stores the row, and registers the machine's provider for the org. A
// refused connection stores nothing.
func (s *Service) Add(ctx context.Context, orgID, createdBy string, spec Spec) (store.Host, error) {
	h, err := s.hostOf(orgID, createdBy, spec)
	if err != nil {
		return h, err
	}
	if _, err := s.cfg.Store.GetHostByName(ctx, orgID, h.Name); err == nil {
		return h, errdefs.Conflict("host_exists", "a host named %q is registered in this org", h.Name)
	} else if !errdefs.IsNotFound(err) {
		return h, err
	}
	if h.Address, err = s.pinAddress(ctx, h.Address); err != nil {
		return h, err
	}
	p, err := s.provider(h, spec.PrivateKey)
	if err != nil {
		return h, err
	}
	if err := check(ctx, p, h.Address); err != nil {
		_ = p.Close()
		return h, err
	}
	sealed := sealOf(h)
	if err := s.cfg.Keys.Seal(&sealed, spec.PrivateKey); err != nil {
		_ = p.Close()
		return h, err
	}
	h.KeyID, h.SealedKey = sealed.KeyID, sealed.Sealed
	if err := s.cfg.Store.CreateHost(ctx, h); err != nil {
		_ = p.Close()
		return h, err
	}
	if err := s.add(h, p); err != nil {
		_ = s.cfg.Store.DeleteHost(context.WithoutCancel(ctx), h.ID)
		return h, err
	}
	s.logger.InfoContext(ctx, "machine registered", "host", h.ID, "org", orgID, "name", h.Name, "address", h.Address)
	return h, nil
}

// hostOf checks spec and returns the row it makes (not yet sealed).
func (s *Service) hostOf(orgID, createdBy string, spec Spec) (store.Host, error) {
	now := s.cfg.Now().UTC().Truncate(time.Microsecond)
	h := store.Host{ID: uuid.NewString(), OrgID: orgID, Name: spec.Name, User: spec.User, CreatedBy: createdBy, CreatedAt: now,
		State: store.HostReady, LastUsedAt: now,
		DockerSocket: spec.DockerSocket, RunDir: spec.RunDir, DiskDir: spec.DiskDir,
		IdleTeardown: spec.IdleTeardown, TeardownCommand: spec.TeardownCommand, CostPerHourMicros: spec.CostPerHourMicros,
		Mode: spec.Mode.OrDefault()}
	switch {
	case !tenancy.NameRE.MatchString(spec.Name) || strings.HasPrefix(spec.Name, store.HostProviderPrefix):
		return h, errdefs.InvalidArgument(CodeInvalidName, "a host's name is lowercase letters, digits and '-' (at most 63), not starting with %q", store.HostProviderPrefix)
	case s.isInstallationProvider(spec.Name):
		return h, errdefs.Conflict("host_exists", "%q names one of this installation's providers; choose another name", spec.Name)
	case spec.User == "" || strings.ContainsAny(spec.User, "@: \t\n"):
		return h, errdefs.InvalidArgument(CodeInvalid, "name the account to log in as (user)")
	case len(spec.PrivateKey) == 0:
		return h, errdefs.InvalidArgument(CodeInvalidKey, "the private key to log in with is required")
	case spec.IdleTeardown < 0 || spec.IdleTeardown%time.Second != 0 || len(spec.TeardownCommand) > MaxTeardownCommand:
		return h, errdefs.InvalidArgument(CodeInvalid, "idle_teardown is a positive duration in whole seconds, and teardown_command at most %d bytes", MaxTeardownCommand)
	case spec.RunDir != "" && strings.Count(path.Clean(spec.RunDir), "/") < 2:
		return h, errdefs.InvalidArgument(CodeInvalid, "run_dir %q is removed when the machine is torn down: name a directory of paddock's own, at least two levels deep", spec.RunDir)
	case h.Mode != store.HostContainer && h.Mode != store.HostBare:
		return h, errdefs.InvalidArgument(CodeInvalidMode, "a host's mode is %s (sandboxes in its Docker engine) or %s (sshd only, logged in as root)", store.HostContainer, store.HostBare)
	case h.Mode == store.HostBare && spec.DockerSocket != "":
		return h, errdefs.InvalidArgument(CodeInvalidMode, "a bare machine has no Docker engine: leave docker_socket out")
	case spec.HostKey == "":
		return h, errdefs.InvalidArgument(CodeHostKeyRequired, "the machine's host key must be pinned (host_key; the command line's --host-key or --known-hosts)")
	}
	if _, err := ssh.ParsePrivateKey(spec.PrivateKey); err != nil {
		return h, errdefs.InvalidArgument(CodeInvalidKey, "the private key is not a usable one (an unencrypted OpenSSH key is needed)")
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(spec.HostKey))
	if err != nil {
		return h, errdefs.InvalidArgument(CodeInvalidHostKey, "the host key is one line as authorized_keys writes it (type and base64)")
	}
	h.HostKey = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
	addr, err := address(spec.Address)
	if err != nil {
		return h, err
	}
	h.Address = addr
	for _, p := range []*string{&h.DockerSocket, &h.RunDir, &h.DiskDir} {
		if *p != "" && (!path.IsAbs(*p) || path.Clean(*p) != *p) {
			return h, errdefs.InvalidArgument(CodeInvalid, "%q: the paths on the machine are absolute and clean", *p)
		}
	}
	return h, nil
}

// address is spec's address as host:port, port 22 when it has none.
func address(a string) (string, error) {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		host, port = a, "22"
	}
	if host == "" || strings.ContainsAny(host, "/@ \t\n") || port == "" {
		return "", errdefs.InvalidArgument(CodeInvalid, "the address %q is a host or host:port", a)
	}
	return net.JoinHostPort(host, port), nil
}

func (s *Service) isInstallationProvider(name string) bool {
	for _, n := range s.cfg.Providers.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// Get returns orgID's machine called name (404 host_not_found, as one of
// another org's).
func (s *Service) Get(ctx context.Context, orgID, name string) (store.Host, error) {
	h, err := s.cfg.Store.GetHostByName(ctx, orgID, name)
	if errdefs.IsNotFound(err) {
		return h, errdefs.NotFound(CodeNotFound, "no host %q in this org", name)
	}
	return h, err
}

// List lists orgID's machines, oldest first.
func (s *Service) List(ctx context.Context, orgID string, page store.Page) ([]store.Host, string, error) {
	return s.cfg.Store.ListHosts(ctx, orgID, page)
}

// Remove unregisters h: refused (409 host_in_use) while a sandbox of
// paddock's is on it (starting, running or paused: archive or delete
// those runtimes first). Its provider leaves the registry and its
// connection closes.
func (s *Service) Remove(ctx context.Context, h store.Host) error {
	counts, err := s.cfg.Store.CountSandboxes(ctx)
	if err != nil {
		return err
	}
	live := 0
	for _, c := range counts {
		if c.Provider == h.ProviderName() {
			live += c.Count
		}
	}
	if live > 0 {
		return errdefs.Conflict(CodeInUse, "host %q has %d live sandboxes; archive or delete their runtimes first", h.Name, live)
	}
	if err := s.cfg.Store.DeleteHost(ctx, h.ID); err != nil {
		return err
	}
	s.mu.Lock()
	p := s.owned[h.ProviderName()]
	delete(s.owned, h.ProviderName())
	delete(s.hourly, h.ProviderName())
	s.cfg.Providers.Remove(h.ProviderName())
	s.mu.Unlock()
	if p != nil {
		_ = p.Close()
	}
	s.logger.InfoContext(ctx, "machine removed", "host", h.ID, "org", h.OrgID, "name", h.Name)
	return nil
}
