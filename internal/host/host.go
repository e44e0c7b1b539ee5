// Package host keeps the machines orgs bring: a machine reachable over
// SSH, with a Docker engine or (bare mode) sshd alone, registered by an org (`paddock host add`),
// becomes an ssh provider (internal/providers/ssh) that only that org's
// runtimes use. Its private key is sealed with the secrets key, as
// secrets are, and never returned.
package host

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store"
)

// Error codes of the hosts' operations (the ssh provider's ssh_* codes
// answer a connection that registration refused).
const (
	CodeNotFound        = "host_not_found"
	CodeInvalid         = "invalid_host"
	CodeInvalidName     = "invalid_host_name"
	CodeHostKeyRequired = "host_key_required"
	CodeInvalidHostKey  = "invalid_host_key"
	CodeInvalidKey      = "invalid_host_private_key"
	CodeUnreachable     = "host_unreachable"
	CodeInUse           = "host_in_use"
	CodeUnavailable     = "host_unavailable"
	CodeAddressRefused  = "host_address_refused"
	CodeInvalidMode     = "invalid_host_mode"
)

// CheckTimeout bounds registration's check of the connection.
const CheckTimeout = 30 * time.Second

// Store is what the Service uses of the store.
type Store interface {
	store.HostQueries
	CountSandboxes(ctx context.Context) ([]store.SandboxCount, error)
	ListSandboxes(ctx context.Context, f store.SandboxFilter, page store.Page) ([]store.Sandbox, string, error)
}

// Config configures a Service.
type Config struct {
	Store     Store
	Keys      *secrets.Keyring
	Providers *provider.Registry
	// Shim finds the agent binary the machines' sandboxes run.
	Shim func() (string, error)
	// Instance labels the compute; PullImages lets a machine's engine
	// pull an image it lacks.
	Instance   string
	PullImages bool
	Logger     *slog.Logger
	Now        func() time.Time
	// Resolve looks a machine's name up (nil: the system's resolver).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Service registers, lists and removes machines, and keeps their
// providers in the registry.
type Service struct {
	cfg    Config
	logger *slog.Logger

	mu     sync.Mutex
	closed bool
	owned  map[string]providerCloser // registry name → its provider
	hourly map[string]int64          // registry name → its cost per hour
}

// New returns a Service; Load registers the stored machines.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	return &Service{cfg: cfg, logger: cfg.Logger, owned: map[string]providerCloser{}, hourly: map[string]int64{}}
}

// Load registers every stored machine's provider. It does not dial: a
// machine that is down fails its runtimes' operations, not the start. One
// whose provider cannot be made (its key does not open) is logged and
// left out: its runtimes answer host_unavailable.
func (s *Service) Load(ctx context.Context) error {
	after := ""
	for {
		hs, err := s.cfg.Store.ListHostsAfter(ctx, after, store.MaxLimit)
		if err != nil {
			return err
		}
		for _, h := range hs {
			if err := s.register(h); err != nil {
				s.logger.Error("a registered machine's provider could not be made", "host", h.ID, "org", h.OrgID, "name", h.Name, "err", err)
			}
		}
		if len(hs) < store.MaxLimit {
			return nil
		}
		after = hs[len(hs)-1].ID
	}
}

// register makes h's provider from its stored row and registers it.
func (s *Service) register(h store.Host) error {
	key, err := s.cfg.Keys.Open(sealOf(h))
	if err != nil {
		return err
	}
	p, err := s.provider(h, key)
	if err != nil {
		return err
	}
	return s.add(h, p)
}

// add registers p, h's provider, for h's org.
func (s *Service) add(h store.Host, p providerCloser) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = p.Close()
		return errClosed
	}
	if err := s.cfg.Providers.RegisterFor(h.OrgID, p); err != nil {
		_ = p.Close()
		return err
	}
	s.owned[p.Name()] = p
	if h.CostPerHourMicros > 0 {
		s.hourly[p.Name()] = h.CostPerHourMicros
	}
	return nil
}

// HourlyRate is the cost per hour of the machine whose provider is
// registered as provider, in micro-credits, for the ledger's pricing
// (ledger.Pricing.Hourly): false for every other provider, and for a
// machine without one (its sandboxes are priced by their resources).
func (s *Service) HourlyRate(provider string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.hourly[provider]
	return v, ok
}

// Close closes every machine's provider (their SSH connections).
func (s *Service) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for name, p := range s.owned {
		s.cfg.Providers.Remove(name)
		_ = p.Close()
	}
	clear(s.owned)
	clear(s.hourly)
	return nil
}

// sealOf is h's key as the keyring seals and opens it (and a rotation of
// the secrets key seals it again).
func sealOf(h store.Host) store.Secret { return secrets.HostKeySecret(h) }
