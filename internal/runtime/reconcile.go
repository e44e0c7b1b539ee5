package runtime

import (
	"context"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// Reconciliation is what Reconcile did to one runtime.
type Reconciliation string

const (
	ReconcileNone        Reconciliation = ""            // ledger and provider agreed
	ReconcileInterrupted Reconciliation = "interrupted" // a start cut short: row killed, runtime idle
	ReconcileVanished    Reconciliation = "vanished"    // compute gone: row killed, runtime in error
	ReconcileExited      Reconciliation = "exited"      // compute stopped: destroyed, row killed, runtime in error
	ReconcileRepaused    Reconciliation = "repaused"    // compute ran while the ledger said paused
	ReconcileResumed     Reconciliation = "resumed"     // compute paused while the ledger said running
	ReconcileUnlinked    Reconciliation = "unlinked"    // the runtime pointed at a killed or missing row
)

// Reconcile brings one runtime, its ledger row and its compute into
// agreement after a crash. The ledger states the intent and the provider is
// driven to it, so nothing runs unbilled and nothing is billed that does
// not run:
//
//   - starting (the server died mid-start): the compute, if any, is
//     destroyed, the row killed as interrupted, the runtime idle;
//   - running or paused whose compute is gone: the row is killed as
//     vanished and the runtime is in error;
//   - compute that stopped by itself: destroyed, row killed as exited,
//     runtime in error;
//   - compute paused while the row says running is resumed, and running
//     while the row says paused is paused.
//
// It takes the runtime's lock, so it never races an action in this process.
func (s *Service) Reconcile(ctx context.Context, runtimeID string) (Reconciliation, error) {
	defer s.pending.done(runtimeID)
	ctx = context.WithValue(ctx, reconcilingKey{}, true)
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (Reconciliation, error) {
		if rt.CurrentSandboxID == "" {
			if rt.Status == store.RuntimeStarting || rt.Status == store.RuntimeRunning || rt.Status == store.RuntimePaused {
				_, err := s.release(ctx, rt, KillInterrupted, store.RuntimeIdle)
				return ReconcileUnlinked, err
			}
			return ReconcileNone, nil
		}
		sb, err := s.store.GetSandbox(ctx, rt.CurrentSandboxID)
		if errdefs.IsNotFound(err) || (err == nil && sb.State == store.SandboxKilled) {
			_, err := s.release(ctx, rt, KillInterrupted, store.RuntimeIdle)
			return ReconcileUnlinked, err
		}
		if err != nil {
			return ReconcileNone, err
		}

		if rt.Status == store.RuntimeStarting || sb.State == store.SandboxStarting {
			// Nobody is starting it any more: this process holds the lock.
			_, err := s.release(ctx, rt, KillInterrupted, store.RuntimeIdle)
			return ReconcileInterrupted, err
		}

		p, err := s.providers.Get(sb.Provider)
		if err != nil {
			return ReconcileNone, err
		}
		st, err := p.Inspect(ctx, handleOf(sb))
		switch {
		case errdefs.IsNotFound(err):
			_, err := s.release(ctx, rt, KillVanished, store.RuntimeError)
			return ReconcileVanished, err
		case err != nil:
			return ReconcileNone, err
		}
		switch {
		case st.State == provider.StateStopped:
			rt, err = s.release(ctx, rt, KillExited, store.RuntimeError)
			if err == nil {
				err = s.setReason(ctx, rt, "the sandbox stopped by itself; reset the runtime")
			}
			return ReconcileExited, err
		case sb.State == store.SandboxRunning && st.State == provider.StatePaused:
			if err := p.Resume(ctx, handleOf(sb)); err != nil {
				return ReconcileNone, providerFailure("resume", err)
			}
			return ReconcileResumed, s.syncStatus(ctx, rt, sb, store.RuntimeRunning)
		case sb.State == store.SandboxPaused && st.State == provider.StateRunning:
			if err := p.Pause(ctx, handleOf(sb)); err != nil {
				return ReconcileNone, providerFailure("pause", err)
			}
			return ReconcileRepaused, s.syncStatus(ctx, rt, sb, store.RuntimePaused)
		}
		want := store.RuntimeRunning
		if sb.State == store.SandboxPaused {
			want = store.RuntimePaused
		}
		if rt.Status != want {
			return ReconcileNone, s.syncStatus(ctx, rt, sb, want)
		}
		return ReconcileNone, nil
	})
}

// syncStatus sets the runtime's status to match its sandbox row sb
// (running or paused).
func (s *Service) syncStatus(ctx context.Context, rt store.Runtime, sb store.Sandbox, status store.RuntimeStatus) error {
	if rt.Status == status {
		return nil
	}
	to := rt.State()
	to.Status = status
	at := s.now()
	saved, err := setState(ctx, s.store, rt, to, at)
	if err != nil {
		return err
	}
	kind := EventRunning
	if status == store.RuntimePaused {
		kind = EventPaused
	}
	s.publish(Event{Kind: kind, Runtime: saved, Sandbox: sb, At: at})
	return nil
}

func (s *Service) setReason(ctx context.Context, rt store.Runtime, reason string) error {
	to := rt.State()
	to.StatusReason = reason
	_, err := setState(ctx, s.store, rt, to, s.now())
	return err
}

// Orphan is compute a provider runs that the ledger does not account for.
type Orphan struct {
	Provider string
	ID       string
	Sandbox  string // the ledger row it claims, if any
}

// RemoveOrphans destroys the compute of this installation whose ledger row
// is missing or killed. Compute whose row is still starting is left to the
// start that owns it (or to Reconcile, which kills such rows first). A
// machine an org brought that cannot be listed (it is down) is passed
// over, not the installation's failure.
func (s *Service) RemoveOrphans(ctx context.Context) ([]Orphan, error) {
	var removed []Orphan
	for _, name := range s.providers.AllNames() {
		p, err := s.providers.Get(name)
		if err != nil {
			continue // an org's machine removed meanwhile
		}
		l, ok := p.(provider.Lister)
		if !ok {
			continue
		}
		if pk, ok := p.(interface{ Parked() bool }); ok && pk.Parked() {
			continue // a machine torn down: not dialled for this
		}
		listed, err := l.List(ctx, s.instance)
		if _, owned := s.providers.Owner(name); err != nil && owned {
			s.logger.WarnContext(ctx, "an org's machine could not be listed for orphans", "provider", name, "err", err)
			continue
		}
		if err != nil {
			return removed, providerFailure("list", err)
		}
		for _, c := range listed {
			id := c.Labels[provider.LabelSandbox]
			sb, err := s.store.GetSandbox(ctx, id)
			switch {
			case err == nil && sb.State != store.SandboxKilled && (sb.ProviderSandboxID == c.Handle.ID || sb.State == store.SandboxStarting):
				continue // accounted for
			case err != nil && !errdefs.IsNotFound(err):
				return removed, err
			case err != nil && s.isWarm(ctx, id, c.Handle.ID):
				continue // in the warm pool
			}
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			err = p.Destroy(dctx, c.Handle)
			cancel()
			if err != nil && !errdefs.IsNotFound(err) {
				return removed, providerFailure("destroy", err)
			}
			s.logger.WarnContext(ctx, "removed orphaned compute", "provider", name, "provider_sandbox_id", c.Handle.ID, "sandbox", id)
			removed = append(removed, Orphan{Provider: name, ID: c.Handle.ID, Sandbox: id})
		}
	}
	return removed, nil
}

// CodeReconciling answers an action on a runtime that start-up
// reconciliation has not reached yet.
const CodeReconciling = "reconciling"

// HoldForReconcile marks runtimes that start-up reconciliation will visit:
// until Reconcile has run on one, actions on it answer 503 reconciling,
// while every other runtime is served. The server calls it before it
// serves, then reconciles in the background.
func (s *Service) HoldForReconcile(ids []string) { s.pending.hold(ids) }

// ReleaseHeld lets every held runtime be served again: start-up
// reconciliation ended, even if it could not reach them all (the periodic
// one will).
func (s *Service) ReleaseHeld() {
	s.pending.mu.Lock()
	defer s.pending.mu.Unlock()
	clear(s.pending.ids)
	s.pending.running = false
}

// BeginReconcile says this server is running the start-up reconciliation
// (it holds the lifecycle lease): Reconciling stays true until
// ReleaseHeld, after the reconciliation's last step.
func (s *Service) BeginReconcile() {
	s.pending.mu.Lock()
	defer s.pending.mu.Unlock()
	s.pending.running = true
}

// Reconciling reports whether start-up reconciliation is still pending
// here: runtimes are held for it, or this server is running it
// (BeginReconcile) and has not reached its last step yet (the warm pool
// and orphaned compute, after every runtime), even once every held runtime
// has been reached and is served again.
func (s *Service) Reconciling() bool {
	s.pending.mu.Lock()
	defer s.pending.mu.Unlock()
	return s.pending.running || len(s.pending.ids) > 0
}

type reconcilingKey struct{}

// pendingSet holds the runtimes start-up reconciliation has not reached.
type pendingSet struct {
	mu  sync.Mutex
	ids map[string]bool
	// running is true while this server runs the reconciliation.
	running bool
}

func (p *pendingSet) hold(ids []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil {
		p.ids = map[string]bool{}
	}
	for _, id := range ids {
		p.ids[id] = true
	}
}

func (p *pendingSet) done(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.ids, id)
}

// check refuses a runtime still waiting for reconciliation, except to the
// reconciliation itself.
func (p *pendingSet) check(ctx context.Context, id string) error {
	if ctx.Value(reconcilingKey{}) != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids[id] {
		return errdefs.Unavailable(CodeReconciling, "runtime %s is being checked after a restart; try again in a moment", id)
	}
	return nil
}
