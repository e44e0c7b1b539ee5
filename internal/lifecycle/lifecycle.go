// Package lifecycle runs the automation that keeps runtimes honest without
// anyone asking: expired sandboxes are paused (never killed with work in
// them), runtimes paused past their archive threshold are archived, the
// warm pool is kept full, and a reconciler brings the ledger and the
// providers back into agreement after a crash — on start-up and then
// periodically.
//
// The Manager has two loops (Run): the rounds (RunRounds), and the
// warm-pool filler (FillWarmPools), which is slow (it provisions compute)
// and must not hold up expiry; the server runs each under its own lease,
// so each runs on one replica at a time. Tick does one round and is what
// tests call with an injected time: no sleeps.
package lifecycle

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// Store is what a Manager reads of the store: the runtimes to reconcile
// and their sandboxes.
type Store interface {
	ListRuntimesByStatus(ctx context.Context, statuses []store.RuntimeStatus) ([]store.Runtime, error)
	GetSandbox(ctx context.Context, id string) (store.Sandbox, error)
}

// Config configures a Manager.
type Config struct {
	Store    Store
	Runtimes *runtime.Service
	// Interval between expiry rounds; 0 means 5s.
	Interval time.Duration
	// ReconcileEvery is how often a full reconciliation runs after the
	// start-up one; 0 means 1m.
	ReconcileEvery time.Duration
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Concurrency bounds how many runtimes a reconciliation handles at
	// once; 0 means 8. Each waits mostly on its provider.
	Concurrency int
}

// Manager runs expiry and reconciliation.
type Manager struct {
	cfg    Config
	now    func() time.Time
	logger *slog.Logger

	mu            sync.Mutex
	lastReconcile time.Time
	// sweepAgain: the next round looks for orphaned compute once more (see
	// Reconcile).
	sweepAgain bool
}

// New returns a Manager.
func New(cfg Config) *Manager {
	if cfg.Interval == 0 {
		cfg.Interval = 5 * time.Second
	}
	if cfg.ReconcileEvery == 0 {
		cfg.ReconcileEvery = time.Minute
	}
	m := &Manager{cfg: cfg, now: cfg.Now, logger: cfg.Logger}
	if m.now == nil {
		m.now = time.Now
	}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	return m
}

// Report is what one round did.
type Report struct {
	Expired       []string                          // runtimes paused with reason timeout
	Archived      []string                          // runtimes archived
	WarmDiscarded int                               // warm sandboxes reconciled away
	Reconciled    map[string]runtime.Reconciliation // runtimes changed by reconciliation
	Orphans       []runtime.Orphan                  // compute removed
}

// Hold marks every live runtime as waiting for reconciliation (see
// runtime.Service.HoldForReconcile), so a server can serve the others
// while Reconcile works through them.
func (m *Manager) Hold(ctx context.Context) error {
	rts, err := m.cfg.Store.ListRuntimesByStatus(ctx, liveStatuses)
	if err != nil {
		return err
	}
	ids := make([]string, len(rts))
	for i, rt := range rts {
		ids[i] = rt.ID
	}
	m.cfg.Runtimes.HoldForReconcile(ids)
	return nil
}

// liveStatuses are the runtime statuses that have compute to reconcile.
var liveStatuses = []store.RuntimeStatus{store.RuntimeStarting, store.RuntimeRunning, store.RuntimePaused}

// Reconcile brings every live runtime and all of this installation's
// compute into agreement with the ledger.
func (m *Manager) Reconcile(ctx context.Context) (Report, error) {
	rep := Report{Reconciled: map[string]runtime.Reconciliation{}}
	rts, err := m.cfg.Store.ListRuntimesByStatus(ctx, liveStatuses)
	if err != nil {
		return rep, err
	}
	var (
		errs []error
		mu   sync.Mutex
		wg   sync.WaitGroup
		sem  = make(chan struct{}, cmp.Or(m.cfg.Concurrency, 8))
	)
	for _, rt := range rts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			what, err := m.cfg.Runtimes.Reconcile(ctx, rt.ID)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			if what != runtime.ReconcileNone {
				rep.Reconciled[rt.ID] = what
				m.logger.WarnContext(ctx, "reconciled runtime", "runtime", rt.ID, "action", string(what))
			}
		})
	}
	wg.Wait()
	discarded, err := m.cfg.Runtimes.ReconcileWarm(ctx)
	rep.WarmDiscarded = discarded
	errs = append(errs, err)
	// Orphans last: rows killed above release their compute here.
	orphans, err := m.cfg.Runtimes.RemoveOrphans(ctx)
	rep.Orphans = orphans
	errs = append(errs, err)
	m.mu.Lock()
	m.lastReconcile = m.now()
	// Compute an earlier process had already asked the engine to make or
	// remove when it died may show up, or linger, after the listing above:
	// the next round sweeps again, a round's interval later, not a
	// reconciliation's.
	m.sweepAgain = true
	m.mu.Unlock()
	return rep, errors.Join(errs...)
}

// Expire pauses, with reason timeout, every running runtime whose
// sandbox's window has passed at now.
func (m *Manager) Expire(ctx context.Context, now time.Time) ([]string, error) {
	rts, err := m.cfg.Store.ListRuntimesByStatus(ctx, []store.RuntimeStatus{store.RuntimeRunning})
	if err != nil {
		return nil, err
	}
	var (
		paused []string
		errs   []error
	)
	for _, rt := range rts {
		if rt.CurrentSandboxID == "" {
			continue
		}
		sb, err := m.cfg.Store.GetSandbox(ctx, rt.CurrentSandboxID)
		if err != nil || sb.ExpiresAt.IsZero() || sb.ExpiresAt.After(now) {
			continue
		}
		ok, err := m.cfg.Runtimes.PauseIfExpired(ctx, rt.ID, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			paused = append(paused, rt.ID)
			m.logger.InfoContext(ctx, "paused an expired sandbox", "runtime", rt.ID, "sandbox", sb.ID, "expired_at", sb.ExpiresAt)
		}
	}
	return paused, errors.Join(errs...)
}

// Archive archives every runtime paused longer than its archive threshold
// at now.
func (m *Manager) Archive(ctx context.Context, now time.Time) ([]string, error) {
	rts, err := m.cfg.Store.ListRuntimesByStatus(ctx, []store.RuntimeStatus{store.RuntimePaused})
	if err != nil {
		return nil, err
	}
	var (
		archived []string
		errs     []error
	)
	for _, rt := range rts {
		ok, err := m.cfg.Runtimes.ArchiveIfDue(ctx, rt.ID, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			archived = append(archived, rt.ID)
		}
	}
	return archived, errors.Join(errs...)
}

// Tick does one round at now: expiry and archiving always, reconciliation
// when it is due.
func (m *Manager) Tick(ctx context.Context, now time.Time) (Report, error) {
	expired, err := m.Expire(ctx, now)
	archived, aerr := m.Archive(ctx, now)
	err = errors.Join(err, aerr)
	rep := Report{Reconciled: map[string]runtime.Reconciliation{}}
	m.mu.Lock()
	due := now.Sub(m.lastReconcile) >= m.cfg.ReconcileEvery
	sweep := m.sweepAgain && !due
	m.sweepAgain = false
	m.mu.Unlock()
	switch {
	case due:
		var rerr error
		rep, rerr = m.Reconcile(ctx)
		err = errors.Join(err, rerr)
	case sweep:
		orphans, serr := m.cfg.Runtimes.RemoveOrphans(ctx)
		rep.Orphans = orphans
		err = errors.Join(err, serr)
	}
	rep.Expired, rep.Archived = expired, archived
	return rep, err
}

// Run ticks every Interval and keeps the warm pool full until ctx ends,
// and returns when its work has stopped: RunRounds and FillWarmPools at
// once. The server calls Reconcile once before RunRounds, and runs each
// under its own lease.
func (m *Manager) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { m.FillWarmPools(ctx) })
	m.RunRounds(ctx)
	wg.Wait()
}

// RunRounds does a round (Tick) every Interval until ctx ends, and returns
// when the round in progress has.
func (m *Manager) RunRounds(ctx context.Context) {
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := m.Tick(ctx, m.now()); err != nil && ctx.Err() == nil {
				m.logger.ErrorContext(ctx, "lifecycle round", "err", err)
			}
		}
	}
}

// FillWarmPools refills the warm pool now, after every claim, and every
// Interval (to retry failures and replace what reconciliation discarded),
// until ctx ends.
func (m *Manager) FillWarmPools(ctx context.Context) {
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	for {
		made, err := m.cfg.Runtimes.FillWarmPools(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			m.logger.ErrorContext(ctx, "filling the warm pool", "err", err)
		case made > 0:
			m.logger.InfoContext(ctx, "warm pool filled", "made", made)
		}
		select {
		case <-ctx.Done():
			return
		case <-m.cfg.Runtimes.WarmKicks():
		case <-t.C:
		}
	}
}
