package world

import (
	"context"
	"errors"
	"fmt"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// reasonRestarted is the error of a world a stopped server left starting.
const reasonRestarted = "the server stopped while the world was starting"

// Reconcile brings the worlds a stopped server left behind into
// agreement with their compute, before any world is made:
//
//   - starting (half-created) and orphaned: every member made is killed
//     (interrupted), the network removed, the world failed;
//   - deleting and orphaned: what is left is removed and the world
//     deleted (failed, if it was being failed);
//   - running or paused with a member whose compute is gone or stopped:
//     that member is killed (vanished), the others (interrupted), the
//     network removed, the world failed; otherwise it is kept as it is;
//   - a world network whose world is missing or gone (its row never
//     written, or torn down while the engine was away) is removed.
//
// A create or delete is orphaned when its runner is this replica (it left
// it when it stopped), unknown, or a replica whose presence has lapsed; a
// live replica's is left to it. A world is claimed before it is torn
// down (see claim). It returns how many worlds it tore down; a world that
// could not be read or torn down is left for the next pass and the others
// are reconciled: the error then wraps lease.ErrRowsLeft.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	return s.reconcile(ctx, true)
}

// Sweep, while this replica runs, tears down the creates and deletes
// whose runner is gone (its presence lapsed), as Reconcile does, and
// removes the world networks whose world is missing or gone; it leaves
// this replica's own worlds, every live replica's, those of no known
// runner (an older replica's, in a rolling upgrade), and the running and
// paused ones. Without Replicas it does nothing.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	if s.replicas == nil {
		return 0, nil
	}
	return s.reconcile(ctx, false)
}

// reconcile is Reconcile (restart) or Sweep.
func (s *Service) reconcile(ctx context.Context, restart bool) (int, error) {
	// The worlds first, then the presences: a world's runner announced
	// itself before it wrote the world, so it reads live unless it lapsed.
	live, err := s.store.ListLiveWorlds(ctx)
	if err != nil {
		return 0, err
	}
	var runners lease.Runners
	if s.replicas != nil {
		if runners, err = s.replicas.Runners(ctx); err != nil {
			return 0, err
		}
	}
	owned := map[string]bool{}
	n := 0
	var errs []error
	for _, row := range live {
		w, err := Decode(row)
		if err == nil {
			var gone bool
			if gone, err = s.reconcileOne(ctx, w, runners, restart); gone {
				n++
				continue
			}
		}
		owned[row.ID] = true
		if err != nil {
			s.logger.ErrorContext(ctx, "a world could not be reconciled; it is left for the next pass", "world", row.ID, "status", row.Status, "err", err)
			errs = append(errs, fmt.Errorf("world %s: %w", row.ID, err))
		}
	}
	errs = append(errs, s.removeStrayNetworks(ctx, owned)...)
	if len(errs) > 0 {
		return n, fmt.Errorf("%w: %w", lease.ErrRowsLeft, errors.Join(errs...))
	}
	return n, nil
}

// reconcileOne reconciles w and reports whether it tore it down.
func (s *Service) reconcileOne(ctx context.Context, w World, runners lease.Runners, restart bool) (bool, error) {
	switch w.Status {
	case store.WorldStarting, store.WorldDeleting:
		if !runners.Orphaned(w.Runner, restart) {
			return false, nil // a live replica is making or deleting it
		}
	default:
		if !restart {
			return false, nil
		}
	}
	defer s.lock(w.ID)()
	switch w.Status {
	case store.WorldStarting:
		if ok, err := s.claim(ctx, &w, reasonRestarted); !ok {
			return false, err
		}
		return s.finishTeardown(ctx, w, runtime.KillInterrupted)
	case store.WorldDeleting:
		if w.Spec.Error != "" { // claimed to be failed, by a pass cut short
			return s.finishTeardown(ctx, w, runtime.KillInterrupted)
		}
		return s.finishTeardown(ctx, w, runtime.KillDeleted)
	}
	broken, err := s.brokenMember(ctx, w)
	if err != nil || broken == "" {
		return false, err
	}
	if ok, err := s.claim(ctx, &w, "member "+broken+"'s compute was gone or stopped when the server started"); !ok {
		return false, err
	}
	if m, ok := w.Member(broken); ok {
		if _, err := s.runtimes.EndWorldSandbox(ctx, m.SandboxID, runtime.KillVanished); err != nil && !errdefs.IsNotFound(err) {
			s.logger.ErrorContext(ctx, "ending a world's vanished member", "world", w.ID, "member", broken, "err", err)
		}
	}
	return s.finishTeardown(ctx, w, runtime.KillInterrupted)
}

// claim takes the orphaned world w (starting, or running or paused with a
// member gone) for this replica before anything of it is torn down: it
// writes it deleting, with this replica as its runner and failure as its
// error, only from the status it was decided on. A runner that comes back
// meanwhile then fails to write its world running and tears down what it
// made, rather than leave a running world with its members gone; another
// replica reconciling at once finds it moved on; and a pass cut short
// after the claim leaves a deletion that the next one finishes, failed.
// It reports whether w was claimed (false: it moved on meanwhile).
func (s *Service) claim(ctx context.Context, w *World, failure string) (bool, error) {
	from := w.Status
	w.Runner = s.replica()
	w.Spec.Error = failure
	ok, err := s.write(ctx, w, store.WorldDeleting, from)
	if ok {
		s.logger.WarnContext(ctx, "tearing down a world its server left "+from, "world", w.ID, "reason", failure)
	}
	return ok, err
}

// finishTeardown tears down the deleting world w, killing its members with
// reason, and records its end: failed when it carries an error (it was
// claimed to be failed), deleted otherwise. One not torn down whole is
// left deleting for the next pass. It reports whether the end was
// written, by this pass or another.
func (s *Service) finishTeardown(ctx context.Context, w World, reason string) (bool, error) {
	if !s.teardown(ctx, w, reason) {
		return false, errdefs.Unavailable("world_teardown_failed", "part of world %s could not be removed", w.ID)
	}
	end := store.WorldDeleted
	if w.Spec.Error != "" {
		end = store.WorldFailed
	}
	ok, err := s.write(ctx, &w, end, store.WorldDeleting)
	if ok {
		s.logger.WarnContext(ctx, "tore down a world its server left", "world", w.ID, "status", end, "runner", w.Runner)
	}
	return err == nil, err
}

// brokenMember names the first member of the running or paused world w
// whose row was killed or whose compute is gone or stopped; "" when
// every member is there.
func (s *Service) brokenMember(ctx context.Context, w World) (string, error) {
	for _, m := range w.Spec.Members {
		sb, err := s.store.GetSandbox(ctx, m.SandboxID)
		if errdefs.IsNotFound(err) {
			return m.Name, nil
		}
		if err != nil {
			return "", err
		}
		if sb.State == store.SandboxKilled {
			return m.Name, nil
		}
		st, err := s.runtimes.InspectWorldSandbox(ctx, sb)
		if errdefs.IsNotFound(err) || (err == nil && st.State == provider.StateStopped) {
			return m.Name, nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", nil
}

// removeStrayNetworks removes the world networks no live world owns. A
// network of a world not among owned is read again first: a world is
// written before its network is made, so one a replica is making now (it
// may have been written after owned was listed) reads starting and its
// network is spared; only a network whose world is missing or gone is
// removed. A network that cannot be removed is left for the next pass.
func (s *Service) removeStrayNetworks(ctx context.Context, owned map[string]bool) []error {
	nets, err := s.runtimes.WorldNetworks(ctx)
	if err != nil {
		return []error{fmt.Errorf("world networks: %w", err)}
	}
	var errs []error
	for prov, ids := range nets {
		for _, id := range ids {
			if owned[id] {
				continue
			}
			if w, err := s.store.GetWorld(ctx, id); err == nil && !store.WorldFinal(w.Status) {
				continue
			} else if err != nil && !errdefs.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("world network %s: %w", id, err))
				continue
			}
			if err := s.runtimes.RemoveWorldNetwork(ctx, prov, id); err != nil {
				s.logger.ErrorContext(ctx, "a stray world network could not be removed; it is left for the next pass", "provider", prov, "world", id, "err", err)
				errs = append(errs, fmt.Errorf("world network %s: %w", id, err))
				continue
			}
			s.logger.WarnContext(ctx, "removed a stray world network", "provider", prov, "world", id)
		}
	}
	return errs
}
