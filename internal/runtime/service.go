// Package runtime is the runtime domain: the state machine of a project's
// durable agent environment and the actions that move it (start, pause,
// resume, reset, keepalive), which provision and release sandboxes through a
// provider and record each one in the sandbox ledger.
//
// State machine (runtime status / current sandbox state):
//
//	idle ─start─▶ starting ─ok─▶ running ─pause, expiry─▶ paused
//	  ▲              │             ▲  ◀──resume, wake───    │
//	  │            failed          │                        │ paused past
//	  │              ▼             └─start, resume, wake──┐ ▼ archive_after
//	  ├──reset──── error                             archived
//	  └──reset (from running, paused, archived, error)
//
// Actions on one runtime are serialized: in one process by a per-runtime
// lock, across processes by the store's optimistic version check (a lost
// race answers 409 runtime_busy). Provisioning runs detached from the
// caller's context so a client that disconnects mid-start cannot leave a
// half-created sandbox behind.
//
// Every transition is published to the service's subscribers (see
// Subscribe in events.go), each on a queue of its own.
package runtime

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// Defaults are the installation's runtime defaults and limits.
type Defaults struct {
	Image string
	// AllowedImages are the images a runtime may name besides Image:
	// exact references, or prefixes ending in '*'. Empty means only
	// Image. Snapshots are never allowed by name.
	AllowedImages      []string
	Provider           string // "" = the registry's default
	CPUMillis          int64
	MemoryMB           int64
	PidsLimit          int64
	DiskMB             int64 // a workspace's disk quota
	MaxDiskMB          int64
	IdleTimeout        time.Duration
	MaxKeepalive       time.Duration // cap on one keepalive extension
	MaxCPUMillis       int64
	MaxMemoryMB        int64
	ProvisionTimeout   time.Duration // bound on one provider action
	WorkspaceVolPrefix string
	// ArchiveAfter is how long a runtime may stay paused before it is
	// archived, unless its config says otherwise. Negative: never.
	ArchiveAfter time.Duration
}

// DefaultDefaults are used for any zero field of Defaults. The ones a
// server's config sets come from config.Default, their one source.
var DefaultDefaults = func() Defaults {
	c := config.Default()
	return Defaults{
		Image:              c.DefaultImage,
		CPUMillis:          1000,
		MemoryMB:           1024,
		PidsLimit:          256,
		DiskMB:             c.DiskMB,
		MaxDiskMB:          c.MaxDiskMB,
		IdleTimeout:        c.IdleTimeout,
		MaxKeepalive:       c.MaxKeepalive,
		MaxCPUMillis:       16000,
		MaxMemoryMB:        65536,
		ProvisionTimeout:   2 * time.Minute,
		WorkspaceVolPrefix: "paddock-ws-",
		ArchiveAfter:       c.ArchiveAfter,
	}
}()

func (d Defaults) withFallbacks() Defaults {
	f := DefaultDefaults
	if d.Image == "" {
		d.Image = f.Image
	}
	if d.CPUMillis == 0 {
		d.CPUMillis = f.CPUMillis
	}
	if d.MemoryMB == 0 {
		d.MemoryMB = f.MemoryMB
	}
	if d.PidsLimit == 0 {
		d.PidsLimit = f.PidsLimit
	}
	if d.DiskMB == 0 {
		d.DiskMB = f.DiskMB
	}
	if d.MaxDiskMB == 0 {
		d.MaxDiskMB = max(f.MaxDiskMB, d.DiskMB)
	}
	if d.IdleTimeout == 0 {
		d.IdleTimeout = f.IdleTimeout
	}
	if d.MaxKeepalive == 0 {
		d.MaxKeepalive = f.MaxKeepalive
	}
	if d.MaxCPUMillis == 0 {
		d.MaxCPUMillis = f.MaxCPUMillis
	}
	if d.MaxMemoryMB == 0 {
		d.MaxMemoryMB = f.MaxMemoryMB
	}
	if d.ProvisionTimeout == 0 {
		d.ProvisionTimeout = f.ProvisionTimeout
	}
	if d.WorkspaceVolPrefix == "" {
		d.WorkspaceVolPrefix = f.WorkspaceVolPrefix
	}
	if d.ArchiveAfter == 0 {
		d.ArchiveAfter = f.ArchiveAfter
	}
	return d
}

// Config configures a Service.
type Config struct {
	Store     Store
	Providers *provider.Registry
	// Instance is this installation's id; it labels all compute.
	Instance string
	Defaults Defaults
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Billing charges for compute; nil makes compute free (see Billing).
	Billing Billing
	// WarmPools are the pre-provisioned sandboxes to keep (see warm.go).
	WarmPools []WarmPool
	// WarmMemoryCeilingMB bounds the memory limits the adaptive warm
	// pools hold together; zero is DefaultWarmMemoryCeilingMB.
	WarmMemoryCeilingMB int64
	// AgentEnv, when set, returns the environment a sandbox's agent
	// injects into every process (egress settings, secrets). It is sent
	// on every new agent connection, never written into the sandbox.
	AgentEnv func(ctx context.Context, sb store.Sandbox) (map[string]string, error)
	// Secrets resolves the secrets runtimes name; nil: a runtime naming
	// any is refused.
	Secrets SecretResolver
	// TrustedCA, when set, is a CA certificate (PEM) that sandboxes in
	// proxy mode trust: the egress proxy's, for brokered secrets.
	TrustedCA []byte
	// Guard says which addresses a runtime's allow rules may not name;
	// nil: a guard that opens none.
	Guard *egress.Guard
	// Metrics records transitions, warm claims and agent reconnects; nil
	// records nothing.
	Metrics *metrics.Metrics
	// Images tells which images are still being built; nil: none are.
	Images ImageBuilds
	// ImageProviders are the providers on the engine Images builds for;
	// it says nothing of images on any other.
	ImageProviders []string
}

// ImageBuilds tells which sandbox images are still being built
// (imagebuild.Builder).
type ImageBuilds interface {
	// Expected reports whether ref is not there yet but is being, or
	// will be, built.
	Expected(ref string) bool
	// Check answers nil when a sandbox may start on ref now, else why
	// not (image_building, image_build_failed).
	Check(ctx context.Context, ref string) error
}

// ImageBuildsOf is b as Config.Images takes it: nil for no builder, not an
// interface holding a nil one.
func ImageBuildsOf(b *imagebuild.Builder) ImageBuilds {
	if b == nil {
		return nil
	}
	return b
}

// Service runs the runtime actions.
type Service struct {
	store      Store
	providers  *provider.Registry
	instance   string
	defaults   Defaults
	now        func() time.Time
	logger     *slog.Logger
	locks      *keyedMutex
	shared     store.Locker // the lock other servers take too; nil on a store only this one opens
	billing    Billing
	agents     *agentPool // see agent.go
	activity   *activity  // see activity.go
	warm       *warmPools // see warm.go
	secrets    SecretResolver
	trustedCA  []byte
	guard      *egress.Guard
	metrics    *metrics.Metrics
	images     ImageBuilds
	imagesOn   []string
	pending    pendingSet   // runtimes start-up reconciliation has not reached
	provisions provisionLog // see provisions.go
	subs       subscribers  // see events.go
}

// New returns a Service.
func New(cfg Config) *Service {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{
		store:     cfg.Store,
		providers: cfg.Providers,
		instance:  cfg.Instance,
		defaults:  cfg.Defaults.withFallbacks(),
		now:       func() time.Time { return now().UTC().Truncate(time.Microsecond) },
		logger:    logger,
		locks:     newKeyedMutex(),
		shared:    sharedLocker(cfg.Store),
		billing:   cfg.Billing,
		agents:    newAgentPool(),
		activity:  newActivity(),
	}
	s.agents.env = cfg.AgentEnv
	s.secrets = cfg.Secrets
	s.trustedCA = cfg.TrustedCA
	s.guard = cfg.Guard
	if s.guard == nil {
		s.guard = egress.NewGuard(egress.GuardConfig{})
	}
	s.metrics = cfg.Metrics
	s.images, s.imagesOn = cfg.Images, cfg.ImageProviders
	s.agents.metrics = cfg.Metrics
	s.warm = s.newWarmPools(cfg.WarmPools, cfg.WarmMemoryCeilingMB)
	return s
}

// imagesFor is what the image builder says of images on provider (""
// being the default), or nil when it builds for another engine or there is
// none.
func (s *Service) imagesFor(provider string) ImageBuilds {
	if provider == "" {
		provider = s.providers.Default()
	}
	if s.images == nil || !slices.Contains(s.imagesOn, provider) {
		return nil
	}
	return s.images
}

// Defaults returns the effective defaults.
func (s *Service) Defaults() Defaults { return s.defaults }

func newID() string { return uuid.NewString() }

// lockRuntime serializes actions on one runtime: first among this
// server's callers, then, holding that, across servers through the
// store's lock (so one server's waiters queue here and hold no database
// connection each).
func (s *Service) lockRuntime(ctx context.Context, id string) (func(), error) {
	unlock, err := s.locks.lock(ctx, id)
	if err != nil {
		return nil, lockCancelled(err)
	}
	if s.shared == nil {
		return unlock, nil
	}
	unlockShared, err := s.shared.LockRuntime(ctx, id)
	if err != nil {
		unlock()
		if ctx.Err() != nil {
			return nil, lockCancelled(err)
		}
		return nil, err
	}
	return func() {
		unlockShared()
		unlock()
	}, nil
}

// lockCancelled is a wait for a runtime's lock that its request ended.
func lockCancelled(err error) error {
	return errdefs.Unavailable("request_cancelled", "the request ended while waiting for another action on this runtime").WithCause(err)
}

// sharedLocker is st's lock across servers, if it has one.
func sharedLocker(st Store) store.Locker {
	l, _ := st.(store.Locker)
	return l
}

// detached returns a context for provider work that must finish even if the
// caller goes away, bounded by the provision timeout.
func (s *Service) detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.defaults.ProvisionTimeout)
}

func handleOf(sb store.Sandbox) provider.Handle {
	return provider.Handle{Provider: sb.Provider, ID: sb.ProviderSandboxID, State: sb.ProviderState}
}
