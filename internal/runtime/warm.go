package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// The warm pool keeps sandboxes provisioned ahead of demand, per template
// (provider, image, resources, network), so that a start claims one instead
// of creating one: the claim and the ledger row are one transaction, and
// the compute only has to be resumed.
//
// A warm sandbox is created, started (its agent answered) and paused, with
// a fresh workspace volume of its own. It belongs to no org and is not in
// the ledger, so nobody pays for it until a start claims it; the ledger
// row then takes the warm sandbox's id, which the compute's labels already
// carry. Only a runtime that never had a sandbox claims one — its workspace
// volume does not exist yet, so the warm sandbox's empty volume becomes its
// workspace. Any other start is a cold start, and so is every start while
// the pool is empty. Claims trigger a refill in the background.
//
// A pool may instead keep its sandboxes running (WarmPool.Running), with
// the link to each agent already open: a claim is then the database
// transaction and nothing else — no unpause, no dial — and the first
// command goes over the open link. Running warm sandboxes hold their
// memory (they are not billed: nobody owns them yet); paused ones are the
// choice for memory-tight hosts.

// LabelWarm marks compute made for the warm pool.
const LabelWarm = "dev.paddock.warm"

// CodeWarmPoolPaused refuses a warm pool kept paused on a provider that
// cannot pause (kubernetes).
const CodeWarmPoolPaused = "warm_pool_cannot_pause"

// WarmPool asks for Size sandboxes kept ready for runtimes whose resolved
// config matches the template, or, with Max set instead, for as many as
// its claim rate needs between Min and Max (see warmsize.go). Zero fields
// take the installation's defaults, as a project created without them
// would.
type WarmPool struct {
	Provider  string
	Image     string
	CPUMillis int64
	MemoryMB  int64
	PidsLimit int64
	DiskMB    int64
	Network   string
	Size      int
	// Min and Max bound an adaptive pool's size (Max > 0 makes it
	// adaptive; Size must then be 0).
	Min, Max int
	// Window is the time constant of an adaptive pool's claim rate; zero
	// is a minute.
	Window time.Duration
	// Running keeps the pool's sandboxes running with their agent link
	// open instead of paused.
	Running bool
}

// warmPools is the Service's view of its pools.
type warmPools struct {
	pools []resolvedPool // the configured ones, resolved against the defaults
	err   error          // why the configuration cannot be served
	// ceilingMB bounds the memory limits the adaptive pools hold, with
	// what the fixed ones hold.
	ceilingMB int64
	kicks     chan struct{}
	busy      sync.Mutex // held while filling or reconciling the pool
}

// newWarmPools resolves the configured pools once: defaults applied, as a
// project created without those fields would get them. A pool naming an
// unknown provider or an invalid config, or a pool kept paused on a
// provider that cannot pause, makes the pools unusable (err).
func (s *Service) newWarmPools(pools []WarmPool, ceilingMB int64) *warmPools {
	if ceilingMB <= 0 {
		ceilingMB = DefaultWarmMemoryCeilingMB
	}
	w := &warmPools{kicks: make(chan struct{}, 1), ceilingMB: ceilingMB}
	for _, wp := range pools {
		if wp.Max > 0 && wp.Size > 0 || wp.Min < 0 || wp.Min > wp.Max && wp.Max > 0 || wp.Min > 0 && wp.Max <= 0 {
			w.err = errdefs.InvalidArgument("invalid_warm_pool", "warm pool for image %q: give it a size, or min and max (0 <= min <= max, max > 0), not both", wp.Image)
			return w
		}
		if wp.Size <= 0 && wp.Max <= 0 {
			continue
		}
		c, err := s.resolveConfig(context.Background(), "", ConfigRequest{
			Image: wp.Image, Provider: wp.Provider, CPUMillis: wp.CPUMillis,
			MemoryMB: wp.MemoryMB, PidsLimit: wp.PidsLimit, DiskMB: wp.DiskMB, Network: store.NetworkConfig{Mode: wp.Network},
		})
		if err != nil {
			w.err = fmt.Errorf("warm pool for image %q: %w", wp.Image, err)
			return w
		}
		p, err := s.providers.Get(c.Provider)
		if err != nil {
			w.err = err
			return w
		}
		if !wp.Running && !p.Capabilities().Pause {
			// Its sandboxes would run unclaimed with no link open, and a
			// claim would have to dial: say running, which is what it is.
			w.err = errdefs.InvalidArgument(CodeWarmPoolPaused,
				"warm pool for image %q: provider %s cannot pause, so its warm sandboxes must be kept running (warm_pool_running, or running: true in warm_pools)", c.Image, p.Name())
			return w
		}
		key := templateKey(p.Name(), c)
		if slices.ContainsFunc(w.pools, func(rp resolvedPool) bool { return rp.key == key }) {
			// One template, one pool: a claim must know whether its
			// sandbox is running or paused.
			w.err = fmt.Errorf("two warm pools for the same template (image %q); give it one pool, running or not", c.Image)
			return w
		}
		rp := resolvedPool{provider: p, config: c, key: key, size: wp.Size, running: wp.Running}
		if wp.Max > 0 {
			rp.min, rp.max, rp.sizer = wp.Min, wp.Max, newWarmSizer(wp.Window)
		}
		w.pools = append(w.pools, rp)
	}
	return w
}

// kick asks for a refill without waiting for it.
func (w *warmPools) kick() {
	select {
	case w.kicks <- struct{}{}:
	default:
	}
}

func templateKey(providerName string, c store.RuntimeConfig) string {
	return fmt.Sprintf("%s|%s|cpu=%d|mem=%d|pids=%d|disk=%d|net=%s%s",
		providerName, c.Image, c.CPUMillis, c.MemoryMB, c.PidsLimit, c.DiskMB, c.Network.Mode, rootFSKey(c)) + userKey(c)
}

// userKey keeps the keys of the default user's templates as they were.
func userKey(c store.RuntimeConfig) string {
	if c.UserName() == store.UserDefault {
		return ""
	}
	return "|user=" + c.UserName()
}

// rootFSKey keeps the keys of read-only templates as they were: warm
// pools are read-only, so a writable runtime never claims one.
func rootFSKey(c store.RuntimeConfig) string {
	if c.RootFSMode() == store.RootFSReadOnly {
		return ""
	}
	return "|rootfs=" + c.RootFS
}

// resolved is a pool with its defaults filled in, and its template key.
type resolvedPool struct {
	provider provider.Provider
	config   store.RuntimeConfig
	key      string
	size     int
	running  bool // kept running with the agent link open, not paused
	// An adaptive pool's bounds and sizer; sizer is nil for a fixed one.
	min, max int
	sizer    *warmSizer
}

// resolvedPools returns the configured pools, or why they cannot be used.
func (s *Service) resolvedPools() ([]resolvedPool, error) { return s.warm.pools, s.warm.err }

// ValidateWarmPools checks the pool configuration; the server calls it
// before it serves.
func (s *Service) ValidateWarmPools() error {
	_, err := s.resolvedPools()
	return err
}

// WarmKicks delivers a value when a claim wants the pool refilled.
func (s *Service) WarmKicks() <-chan struct{} { return s.warm.kicks }

// warmRunning reports whether the pool of template keeps its sandboxes
// running.
func (s *Service) warmRunning(template string) bool {
	pools, _ := s.resolvedPools()
	for _, rp := range pools {
		if rp.key == template {
			return rp.running
		}
	}
	return false
}

// warmTemplate returns rt's template key and whether a pool serves it.
func (s *Service) warmTemplate(providerName string, rt store.Runtime) (string, bool) {
	key := templateKey(providerName, rt.Config)
	pools, err := s.resolvedPools()
	if err != nil {
		return key, false
	}
	for _, rp := range pools {
		if rp.key == key {
			return key, true
		}
	}
	return key, false
}

// claimWarm takes a ready warm sandbox of template for rt inside the
// start's transaction, or returns nil when rt must start cold: it had a
// sandbox before (its workspace exists), or the pool is empty.
func (s *Service) claimWarm(ctx context.Context, q tx, rt store.Runtime, template string) (*store.WarmSandbox, error) {
	prior, _, err := q.ListSandboxes(ctx, store.SandboxFilter{OrgID: rt.OrgID, RuntimeID: rt.ID}, store.Page{Limit: 1})
	if err != nil || len(prior) > 0 {
		return nil, err
	}
	s.warmDemand(template)
	w, err := q.ClaimWarmSandbox(ctx, template)
	if errdefs.IsNotFound(err) {
		s.metrics.WarmClaim(false)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.metrics.WarmClaim(true)
	return &w, nil
}

// warmDemand counts a start that looks for a sandbox of template's pool,
// for an adaptive pool's rate; a start the pool cannot serve kicks the
// filler too, as the pool may have to grow.
func (s *Service) warmDemand(template string) {
	for _, rp := range s.warm.pools {
		if rp.key == template && rp.sizer != nil {
			rp.sizer.claimed(s.now())
			s.warm.kick()
		}
	}
}

// relabeler is p as a Relabeler when the provider behind it (and behind
// its breaker) can change its compute's labels (a Pod's; a Docker
// container's are fixed).
func relabeler(p provider.Provider) (provider.Relabeler, bool) {
	inner := p
	if b, ok := p.(interface{ Unwrap() provider.Provider }); ok {
		inner = b.Unwrap()
	}
	if _, ok := inner.(provider.Relabeler); !ok {
		return nil, false
	}
	r, ok := p.(provider.Relabeler)
	return r, ok
}

// relabelClaimed puts rt's labels (its id and its org's) on the warm
// sandbox h it claimed: after a crash, reconciliation finds the compute's
// owner by its labels as it does for compute made for rt.
func relabelClaimed(ctx context.Context, r provider.Relabeler, h provider.Handle, rt store.Runtime) error {
	return r.Relabel(ctx, h, map[string]string{provider.LabelRuntime: rt.ID, provider.LabelOrg: rt.OrgID})
}

// isWarm reports whether compute (providerID, labelled as sandbox id) is
// a warm sandbox of the pool.
func (s *Service) isWarm(ctx context.Context, id, providerID string) bool {
	w, err := s.store.GetWarmSandbox(ctx, id)
	return err == nil && (w.ProviderSandboxID == providerID || w.State == store.WarmCreating)
}

// FillWarmPools provisions, one at a time, the warm sandboxes the pools
// lack, and returns how many it made. It stops at the first failure.
func (s *Service) FillWarmPools(ctx context.Context) (int, error) {
	pools, err := s.resolvedPools()
	if err != nil || len(pools) == 0 {
		return 0, err
	}
	s.warm.busy.Lock()
	defer s.warm.busy.Unlock()
	have, err := s.warmCounts(ctx)
	if err != nil {
		return 0, err
	}
	size := s.warm.warmSizes(s.now())
	made := 0
	for _, rp := range pools {
		if images := s.imagesFor(rp.provider.Name()); have[rp.key] < size[rp.key] && images != nil {
			// An image the server builds is used once built, never
			// pulled; until then the pool waits (the next round retries).
			if err := images.Check(ctx, rp.config.Image); err != nil {
				s.logger.DebugContext(ctx, "warm pool waits for its image", "template", rp.key, "image", rp.config.Image, "err", err)
				continue
			}
		}
		for have[rp.key] < size[rp.key] {
			if err := ctx.Err(); err != nil {
				return made, err
			}
			t0 := time.Now()
			if err := s.provisionWarm(ctx, rp); err != nil {
				return made, err
			}
			if rp.sizer != nil {
				rp.sizer.refilled(time.Since(t0))
			}
			have[rp.key]++
			made++
		}
	}
	return made, nil
}

func (s *Service) warmCounts(ctx context.Context) (map[string]int, error) {
	all, err := s.store.ListWarmSandboxes(ctx)
	if err != nil {
		return nil, err
	}
	n := map[string]int{}
	for _, w := range all {
		n[w.Template]++
	}
	return n, nil
}

// provisionWarm makes one warm sandbox for rp: row first (state creating,
// so the reconciler knows the compute is ours), then create, start, pause,
// and the row becomes ready. A failure undoes all of it.
func (s *Service) provisionWarm(ctx context.Context, rp resolvedPool) error {
	ctx, cancel := s.detached(ctx)
	defer cancel()
	now := s.now()
	id := newID()
	w := store.WarmSandbox{
		ID:              id,
		Template:        rp.key,
		State:           store.WarmCreating,
		Provider:        rp.provider.Name(),
		Image:           rp.config.Image,
		CPUMillis:       rp.config.CPUMillis,
		MemoryMB:        rp.config.MemoryMB,
		WorkspaceVolume: s.defaults.WorkspaceVolPrefix + id,
		CreatedAt:       now,
		UpdatedAt:       now,
	}
	if err := s.store.CreateWarmSandbox(ctx, w); err != nil {
		return err
	}
	p := rp.provider
	h, err := p.Create(ctx, provider.Spec{
		SandboxID: id,
		Instance:  s.instance,
		Image:     rp.config.Image,
		Resources: provider.Resources{
			CPUMillis: rp.config.CPUMillis,
			MemoryMB:  rp.config.MemoryMB,
			PidsLimit: rp.config.PidsLimit,
			DiskMB:    rp.config.DiskMB,
		},
		Workspace: w.WorkspaceVolume,
		Network:   provider.NetworkPolicy(rp.config.Network.Mode),
		TrustedCA: s.trustFor(rp.config.Network.Mode),
		User:      rp.config.UserName(),
		Labels:    map[string]string{LabelWarm: "true"},
	})
	if err != nil {
		return errors.Join(providerFailure("create", err), s.discardWarm(ctx, w))
	}
	w.ProviderSandboxID, w.ProviderState = h.ID, h.State
	w.UpdatedAt = s.now()
	err = s.store.UpdateWarmSandbox(ctx, w)
	if err == nil {
		err = p.Start(ctx, h)
	}
	switch {
	case err != nil:
	case rp.running && p.Capabilities().Agent:
		// The link is opened now, so the claim does not have to.
		err = s.agents.prewarm(ctx, id, h, p)
	case !rp.running && p.Capabilities().Pause:
		err = p.Pause(ctx, h)
	}
	if err == nil {
		w.State = store.WarmReady
		w.UpdatedAt = s.now()
		err = s.store.UpdateWarmSandbox(ctx, w)
	}
	if err != nil {
		return errors.Join(providerFailure("start", err), s.discardWarm(ctx, w))
	}
	s.logger.DebugContext(ctx, "warm sandbox ready", "sandbox", id, "template", rp.key, "provider_sandbox_id", h.ID)
	return nil
}

// discardWarm destroys a warm sandbox's compute and workspace volume and
// deletes its row.
func (s *Service) discardWarm(ctx context.Context, w store.WarmSandbox) error {
	p, err := s.providers.Get(w.Provider)
	if err != nil {
		return err
	}
	s.agents.forget(warmLink(w.ID), "")
	var errs []error
	if w.ProviderSandboxID != "" {
		h := provider.Handle{Provider: w.Provider, ID: w.ProviderSandboxID, State: w.ProviderState}
		if err := p.Destroy(ctx, h); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if wr, ok := p.(provider.WorkspaceRemover); ok && len(errs) == 0 {
		if err := wr.RemoveWorkspace(ctx, w.WorkspaceVolume); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if err := s.store.DeleteWarmSandbox(ctx, w.ID); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ReconcileWarm brings the warm pool into agreement with its compute and
// its configuration: a sandbox left half-made (the server stopped while
// making it), one whose compute is gone or stopped, one of a template no
// longer configured, and the oldest beyond a pool's size (an adaptive
// pool's target now, so an idle one shrinks back to its Min) are
// discarded.
// It returns how many were. It skips a round while the pool is being
// filled.
func (s *Service) ReconcileWarm(ctx context.Context) (int, error) {
	if !s.warm.busy.TryLock() {
		return 0, nil
	}
	defer s.warm.busy.Unlock()
	if _, err := s.resolvedPools(); err != nil {
		return 0, err
	}
	size := s.warm.warmSizes(s.now())
	all, err := s.store.ListWarmSandboxes(ctx)
	if err != nil {
		return 0, err
	}
	// Newest first, so the oldest are the excess.
	kept := map[string]int{}
	discarded := 0
	var errs []error
	for i := len(all) - 1; i >= 0; i-- {
		w := all[i]
		keep := w.State == store.WarmReady && kept[w.Template] < size[w.Template] && s.warmAlive(ctx, w)
		if keep {
			kept[w.Template]++
			continue
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		err := s.discardWarm(dctx, w)
		cancel()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		discarded++
		s.logger.InfoContext(ctx, "discarded a warm sandbox", "sandbox", w.ID, "template", w.Template, "state", string(w.State))
	}
	return discarded, errors.Join(errs...)
}

// warmAlive reports whether a ready warm sandbox's compute still exists
// and can be claimed: running for a pool that keeps them running (or on a
// provider that cannot pause), else paused.
func (s *Service) warmAlive(ctx context.Context, w store.WarmSandbox) bool {
	p, err := s.providers.Get(w.Provider)
	if err != nil {
		return false
	}
	st, err := p.Inspect(ctx, provider.Handle{Provider: w.Provider, ID: w.ProviderSandboxID, State: w.ProviderState})
	if err != nil {
		return false
	}
	switch st.State {
	case provider.StatePaused:
		return !s.warmRunning(w.Template)
	case provider.StateRunning:
		return s.warmRunning(w.Template)
	}
	return false
}
