// Package binding keeps what an agent brings into its runtime: the org's
// capability inventory, the runtime's capability bindings (installed from
// the inventory or the built-in catalog, pinned to a version, enabled or
// not, with their flags), the merged set of the enabled ones, and applying
// that set to each sandbox the runtime gets — materialized files, setup
// scripts, checks and workers — plus the sidecar services
// (computer_use) its runtime asked for.
//
// Bindings are rows of the runtime, so they survive pause, resume, reset
// and re-provisioning; this service subscribes to the runtime service's
// events and hears whenever a sandbox begins to run, and the set is applied to it in the
// background. What applying did is recorded on each binding (its status)
// and read back through the API and CLI.
package binding

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// Public error codes.
const (
	CodeCapabilityNotFound   = "capability_not_found"
	CodeVersionExists        = "capability_version_exists"
	CodeInUse                = "capability_in_use"
	CodeAlreadyInstalled     = "capability_already_installed"
	CodeConflict             = "capability_conflict"
	CodeBindingNotFound      = "binding_not_found"
	CodeUnknownFlag          = "unknown_flag"
	CodeInvalidCapability    = "invalid_capability"
	CodeInvalidSource        = "invalid_source"
	CodeInvalidBindingConfig = "invalid_binding_config"
)

// MaxBundleBytes bounds an uploaded bundle, compressed and uncompressed.
const MaxBundleBytes = 16 << 20

// Store is what the service uses of the store: an org's inventory and a
// runtime's bindings, read and written alone or in a transaction, and the
// runtime a binding belongs to.
type Store interface {
	store.Transactor
	GetCapabilityVersion(ctx context.Context, orgID, name, version string) (store.CapabilityVersion, error)
	ListCapabilityVersions(ctx context.Context, orgID, name string) ([]store.CapabilityVersion, error)
	GetBinding(ctx context.Context, id string) (store.CapabilityBinding, error)
	ListBindings(ctx context.Context, runtimeID string) ([]store.CapabilityBinding, error)
	SetBindingStatus(ctx context.Context, id string, status []byte, at time.Time) error
	ReplaceBindingStatus(ctx context.Context, id string, from, to []byte) (bool, error)
	DeleteBinding(ctx context.Context, id string) error
	GetRuntime(ctx context.Context, id string) (store.Runtime, error)
}

// Config configures a Service.
type Config struct {
	Store    Store
	Runtimes *runtime.Service
	Logger   *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service keeps inventories and bindings and applies them to sandboxes.
type Service struct {
	store    Store
	runtimes *runtime.Service
	logger   *slog.Logger
	now      func() time.Time

	cacheMu     sync.Mutex
	bundles     map[string]*capability.Bundle // digest → parsed inventory bundle
	cachedBytes int                           // what bundles' files weigh

	mu       sync.Mutex
	runs     map[string]*applyRun // runtime id → its apply in flight
	closed   bool
	stop     context.CancelFunc
	stopCtx  context.Context
	inflight sync.WaitGroup
	// events is the subscription to the runtime service's events; nil
	// without a runtime service.
	events *runtime.Subscription
}

// New returns a Service subscribed to the runtime service's events, which
// tell it when sandboxes begin to run.
func New(cfg Config) *Service {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{
		store: cfg.Store, runtimes: cfg.Runtimes, logger: logger,
		now:  func() time.Time { return now().UTC().Truncate(time.Microsecond) },
		runs: map[string]*applyRun{}, stop: cancel, stopCtx: ctx,
	}
	if cfg.Runtimes != nil {
		s.events = cfg.Runtimes.Subscribe("bindings", s.runtimeEvent)
	}
	return s
}

// Close stops applying and waits for what is in flight to end.
func (s *Service) Close() {
	if s.events != nil {
		s.events.Unsubscribe()
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.inflight.Wait()
}

// Catalog lists the built-in catalog.
func (s *Service) Catalog() []*capability.Bundle { return capability.Catalog() }

// Push adds a bundle (tar or tar.gz) to org's inventory. The same bundle
// again is answered with the stored version and created false; the same
// name and version with other contents is a conflict.
func (s *Service) Push(ctx context.Context, orgID string, r io.Reader) (_ store.CapabilityVersion, created bool, _ error) {
	b, err := capability.ReadTar(r, MaxBundleBytes)
	if err != nil {
		return store.CapabilityVersion{}, false, invalidBundle(err)
	}
	canonical := b.Tar()
	contents, err := encodeContents(ContentsOf(b))
	if err != nil {
		return store.CapabilityVersion{}, false, err
	}
	v := store.CapabilityVersion{
		ID: uuid.NewString(), OrgID: orgID, Name: b.Name, Version: b.Version, Description: b.Description,
		Digest: b.Digest, Contents: contents, Bundle: canonical, SizeBytes: int64(len(canonical)), CreatedAt: s.now(),
	}
	err = s.store.InTx(ctx, func(q store.Queries) error {
		old, err := q.GetCapabilityVersion(ctx, orgID, b.Name, b.Version)
		switch {
		case err == nil && old.Digest == b.Digest:
			v = old
			return nil
		case err == nil:
			return errdefs.Conflict(CodeVersionExists,
				"%s %s is already in the inventory with other contents (%s); bump the version", b.Name, b.Version, old.Digest)
		case !errdefs.IsNotFound(err):
			return err
		}
		created = true
		return q.CreateCapabilityVersion(ctx, v)
	})
	if err != nil {
		return store.CapabilityVersion{}, false, err
	}
	s.cache(b.Digest, b)
	v.Bundle = nil
	return v, created, nil
}

// maxCachedBytes bounds what the parsed inventory bundles kept in memory
// weigh.
const maxCachedBytes = 128 << 20

// cache keeps a parsed bundle by digest; when full, it starts over.
func (s *Service) cache(digest string, b *capability.Bundle) {
	n := 0
	for _, f := range b.Files {
		n += len(f.Data)
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if s.bundles == nil || s.cachedBytes+n > maxCachedBytes {
		s.bundles, s.cachedBytes = map[string]*capability.Bundle{}, 0
	}
	if _, ok := s.bundles[digest]; !ok {
		s.bundles[digest] = b
		s.cachedBytes += n
	}
}

// cached is the parsed bundle of digest, if it is kept.
func (s *Service) cached(digest string) (*capability.Bundle, bool) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	b, ok := s.bundles[digest]
	return b, ok
}

// uncache forgets the parsed bundle of digest.
func (s *Service) uncache(digest string) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if b, ok := s.bundles[digest]; ok {
		for _, f := range b.Files {
			s.cachedBytes -= len(f.Data)
		}
		delete(s.bundles, digest)
	}
}

// invalidBundle gives a bundle's validation problems their public face:
// every problem, each with its path.
func invalidBundle(err error) error {
	var ve *capability.ValidationError
	if errors.As(err, &ve) {
		return errdefs.InvalidArgument(CodeInvalidCapability, "%s", ve.Error()).WithCause(err)
	}
	return errdefs.InvalidArgument(CodeInvalidCapability, "invalid capability bundle").WithCause(err)
}

// Inventory lists org's inventory (versions of name, when given).
func (s *Service) Inventory(ctx context.Context, orgID, name string) ([]store.CapabilityVersion, error) {
	return s.store.ListCapabilityVersions(ctx, orgID, name)
}

// DeleteVersion removes a version from org's inventory, unless a binding
// pins it.
func (s *Service) DeleteVersion(ctx context.Context, orgID, name, version string) error {
	return s.store.InTx(ctx, func(q store.Queries) error {
		v, err := q.GetCapabilityVersion(ctx, orgID, name, version)
		if err != nil {
			return notFoundCapability(err, name, version)
		}
		s.uncache(v.Digest)
		n, err := q.CountInventoryBindings(ctx, orgID, name, version)
		if err != nil {
			return err
		}
		if n > 0 {
			return errdefs.Conflict(CodeInUse, "%s %s is installed on %d runtime(s); uninstall it there first", name, version, n)
		}
		return q.DeleteCapabilityVersion(ctx, orgID, name, version)
	})
}

func notFoundCapability(err error, name, version string) error {
	if errdefs.IsNotFound(err) {
		if version == "" {
			return errdefs.NotFound(CodeCapabilityNotFound, "capability %s not found", name)
		}
		return errdefs.NotFound(CodeCapabilityNotFound, "capability %s %s not found", name, version)
	}
	return err
}

// bundleOf loads the bundle a binding pins.
func (s *Service) bundleOf(ctx context.Context, orgID, source, name, version string) (*capability.Bundle, error) {
	if source == SourceCatalog {
		b, ok := capability.FromCatalog(name, version)
		if !ok {
			return nil, notFoundCapability(errdefs.ErrNotFound, name, version)
		}
		return b, nil
	}
	// The listing carries digests, not bundles: a kept one is not read
	// again.
	versions, err := s.store.ListCapabilityVersions(ctx, orgID, name)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(versions, func(v store.CapabilityVersion) bool { return v.Version == version })
	if i < 0 {
		return nil, notFoundCapability(errdefs.ErrNotFound, name, version)
	}
	if b, ok := s.cached(versions[i].Digest); ok {
		return b, nil
	}
	v, err := s.store.GetCapabilityVersion(ctx, orgID, name, version)
	if err != nil {
		return nil, notFoundCapability(err, name, version)
	}
	b, err := capability.ReadTar(bytes.NewReader(v.Bundle), MaxBundleBytes)
	if err != nil {
		return nil, errdefs.FailedPrecondition("capability_unreadable", "%s %s in the inventory no longer passes validation; push a fixed version", name, version).WithCause(err)
	}
	s.cache(v.Digest, b)
	return b, nil
}

// find resolves what an install names: a source (or none: the inventory,
// then the catalog) and a version (or none: the newest).
func (s *Service) find(ctx context.Context, orgID, source, name, version string) (string, *capability.Bundle, error) {
	if source != "" && source != SourceCatalog && source != SourceInventory {
		return "", nil, errdefs.InvalidArgument(CodeInvalidSource, "source must be %q or %q", SourceCatalog, SourceInventory)
	}
	if source != SourceCatalog {
		versions, err := s.store.ListCapabilityVersions(ctx, orgID, name)
		if err != nil {
			return "", nil, err
		}
		var have []string
		for _, v := range versions {
			have = append(have, v.Version)
		}
		want := version
		if want == "" {
			want = capability.Newest(have)
		}
		// Without a source, a version the inventory lacks may be the
		// catalog's.
		if slices.Contains(have, want) || source == SourceInventory {
			if want == "" {
				return "", nil, notFoundCapability(errdefs.ErrNotFound, name, version)
			}
			b, err := s.bundleOf(ctx, orgID, SourceInventory, name, want)
			return SourceInventory, b, err
		}
	}
	b, ok := capability.FromCatalog(name, version)
	if !ok {
		return "", nil, notFoundCapability(errdefs.ErrNotFound, name, version)
	}
	return SourceCatalog, b, nil
}

// Bindings lists a runtime's bindings in install order, with their
// workers' states brought up to date.
func (s *Service) Bindings(ctx context.Context, rt store.Runtime) ([]store.CapabilityBinding, error) {
	bs, err := s.store.ListBindings(ctx, rt.ID)
	if err != nil {
		return nil, err
	}
	return s.refreshWorkers(ctx, rt, bs), nil
}

// Install binds a capability to a runtime.
func (s *Service) Install(ctx context.Context, rt store.Runtime, req InstallRequest) (store.CapabilityBinding, error) {
	if !capability.ValidName(req.Name) {
		return store.CapabilityBinding{}, errdefs.InvalidArgument(CodeInvalidCapability, "capability name %q is not valid", req.Name)
	}
	source, b, err := s.find(ctx, rt.OrgID, req.Source, req.Name, req.Version)
	if err != nil {
		return store.CapabilityBinding{}, err
	}
	flags := req.Flags
	if _, err := b.FlagValues(flags); err != nil {
		return store.CapabilityBinding{}, errdefs.InvalidArgument(CodeUnknownFlag, "%s", err.Error())
	}
	now := s.now()
	nb := store.CapabilityBinding{
		ID: uuid.NewString(), OrgID: rt.OrgID, RuntimeID: rt.ID, Source: source, Name: b.Name, Version: b.Version,
		Enabled: req.Enabled == nil || *req.Enabled, Flags: flags, CreatedAt: now, UpdatedAt: now,
	}
	err = s.store.InTx(ctx, func(q store.Queries) error {
		existing, err := q.ListBindings(ctx, rt.ID)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(existing, func(e store.CapabilityBinding) bool { return e.Name == nb.Name }) {
			return errdefs.Conflict(CodeAlreadyInstalled, "%s is already installed on runtime %s; PATCH its binding to change the version", nb.Name, rt.ID)
		}
		if err := pinnable(ctx, q, rt.OrgID, nb); err != nil {
			return err
		}
		if nb.Enabled {
			if err := s.checkConflicts(ctx, rt.OrgID, append(existing, nb), map[string]*capability.Bundle{nb.ID: b}); err != nil {
				return err
			}
		}
		return q.CreateBinding(ctx, nb)
	})
	if err != nil {
		return store.CapabilityBinding{}, err
	}
	nb.Rev = 1
	s.schedule(rt.ID, true)
	return nb, nil
}

// Update changes a binding: enabled, config (flags), or the pinned
// version.
func (s *Service) Update(ctx context.Context, rt store.Runtime, bindingID string, req UpdateRequest) (store.CapabilityBinding, error) {
	var out store.CapabilityBinding
	err := s.store.InTx(ctx, func(q store.Queries) error {
		existing, err := q.ListBindings(ctx, rt.ID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(existing, func(e store.CapabilityBinding) bool { return e.ID == bindingID })
		if i < 0 {
			return errdefs.NotFound(CodeBindingNotFound, "binding %s not found on runtime %s", bindingID, rt.ID)
		}
		b := existing[i]
		if req.Version != "" && req.Version != b.Version {
			b.Version = req.Version
		}
		bundle, err := s.bundleOf(ctx, rt.OrgID, b.Source, b.Name, b.Version)
		if err != nil {
			return err
		}
		if err := pinnable(ctx, q, rt.OrgID, b); err != nil {
			return err
		}
		if req.Enabled != nil {
			b.Enabled = *req.Enabled
		}
		if req.SetFlags {
			b.Flags = req.Flags
		}
		if _, err := bundle.FlagValues(b.Flags); err != nil {
			return errdefs.InvalidArgument(CodeUnknownFlag, "%s", err.Error())
		}
		existing[i] = b
		if b.Enabled {
			if err := s.checkConflicts(ctx, rt.OrgID, existing, map[string]*capability.Bundle{b.ID: bundle}); err != nil {
				return err
			}
		}
		b.UpdatedAt = s.now()
		out, err = q.UpdateBinding(ctx, b)
		if err != nil && errdefs.IsConflict(err) {
			return errdefs.Conflict(runtime.CodeBusy, "binding %s changed concurrently; try again", bindingID).WithCause(err)
		}
		return err
	})
	if err != nil {
		return store.CapabilityBinding{}, err
	}
	s.schedule(rt.ID, true)
	return out, nil
}

// Uninstall removes a binding; its workers are stopped and its files
// leave the sandbox.
func (s *Service) Uninstall(ctx context.Context, rt store.Runtime, bindingID string) error {
	b, err := s.store.GetBinding(ctx, bindingID)
	if err != nil || b.RuntimeID != rt.ID {
		return errdefs.NotFound(CodeBindingNotFound, "binding %s not found on runtime %s", bindingID, rt.ID)
	}
	// Its workers stop and its files leave when the set is applied again.
	if err := s.store.DeleteBinding(ctx, b.ID); err != nil {
		return err
	}
	s.schedule(rt.ID, true)
	return nil
}

// pinnable checks, in the transaction that writes b, that the inventory
// version it pins is still there: a version deleted meanwhile is not
// bound.
func pinnable(ctx context.Context, q store.CapabilityQueries, orgID string, b store.CapabilityBinding) error {
	if b.Source != SourceInventory {
		return nil
	}
	versions, err := q.ListCapabilityVersions(ctx, orgID, b.Name) // without the bundles
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(versions, func(v store.CapabilityVersion) bool { return v.Version == b.Version }) {
		return notFoundCapability(errdefs.ErrNotFound, b.Name, b.Version)
	}
	return nil
}

// checkConflicts refuses a set of bindings in which two enabled ones ship
// the same name: it is reported, never silently resolved. loaded holds
// bundles already loaded, by binding id.
func (s *Service) checkConflicts(ctx context.Context, orgID string, bs []store.CapabilityBinding, loaded map[string]*capability.Bundle) error {
	resolved, err := s.resolve(ctx, orgID, bs, loaded)
	if err != nil {
		return err
	}
	if len(resolved.Conflicts) == 0 {
		return nil
	}
	c := resolved.Conflicts[0]
	return errdefs.Conflict(CodeConflict, "%s %q is shipped by %s; disable or uninstall one of them (%d conflict(s) in all)",
		c.Kind, c.Name, joinAnd(c.Capabilities), len(resolved.Conflicts))
}

// resolve merges the enabled bindings of bs, in order.
func (s *Service) resolve(ctx context.Context, orgID string, bs []store.CapabilityBinding, loaded map[string]*capability.Bundle) (capability.Resolved, error) {
	var in []capability.Binding
	for _, b := range bs {
		if !b.Enabled {
			continue
		}
		bundle := loaded[b.ID]
		if bundle == nil {
			var err error
			if bundle, err = s.bundleOf(ctx, orgID, b.Source, b.Name, b.Version); err != nil {
				// Its status says so (apply); the others still resolve.
				s.logger.Warn("a bound capability cannot be loaded", "binding", b.ID, "capability", b.Name, "version", b.Version, "err", err)
				continue
			}
		}
		flags, err := bundle.FlagValues(b.Flags)
		if err != nil {
			return capability.Resolved{}, errdefs.InvalidArgument(CodeUnknownFlag, "%s", err.Error())
		}
		in = append(in, capability.Binding{ID: b.ID, Bundle: bundle, Flags: flags})
	}
	return capability.Resolve(in), nil
}

// Resolved is the merged set of a runtime's enabled bindings, with the
// bindings it came from.
func (s *Service) Resolved(ctx context.Context, rt store.Runtime) (capability.Resolved, []store.CapabilityBinding, error) {
	bs, err := s.Bindings(ctx, rt)
	if err != nil {
		return capability.Resolved{}, nil, err
	}
	r, err := s.resolve(ctx, rt.OrgID, bs, nil)
	return r, bs, err
}

func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	out := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			out += " and "
		default:
			out += ", "
		}
		out += n
	}
	return out
}
