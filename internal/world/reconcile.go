package world

import (
	"context"

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
//     deleted;
//   - running or paused with a member whose compute is gone or stopped:
//     that member is killed (vanished), the others (interrupted), the
//     network removed, the world failed; otherwise it is kept as it is;
//   - a world network whose world is missing or gone (its row never
//     written, or torn down while the engine was away) is removed.
//
// A create or delete is orphaned when its runner is this replica (it left
// it when it stopped), unknown, or a replica whose presence has lapsed; a
// live replica's is left to it. It returns how many worlds it tore down.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	return s.reconcile(ctx, true)
}

// Sweep, while this replica runs, tears down the creates and deletes
// whose runner is gone (its presence lapsed) or unknown, as Reconcile
// does, and removes the world networks whose world is missing or gone; it
// leaves this replica's own worlds, every live replica's, and the running
// and paused ones. Without Replicas it does nothing.
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
	for _, row := range live {
		w, err := Decode(row)
		if err != nil {
			s.logger.ErrorContext(ctx, "a world that cannot be read is left as it is", "world", row.ID, "err", err)
			owned[row.ID] = true
			continue
		}
		gone, err := s.reconcileOne(ctx, w, runners, restart)
		if err != nil {
			return n, err
		}
		if gone {
			n++
		} else {
			owned[w.ID] = true
		}
	}
	return n, s.removeStrayNetworks(ctx, owned)
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
		s.teardown(ctx, w, runtime.KillInterrupted)
		w.Spec.Error = reasonRestarted
		ok, err := s.write(ctx, &w, store.WorldFailed, store.WorldStarting)
		s.logTornDown(ctx, w, ok)
		return true, err
	case store.WorldDeleting:
		s.teardown(ctx, w, runtime.KillDeleted)
		ok, err := s.write(ctx, &w, store.WorldDeleted, store.WorldDeleting)
		s.logTornDown(ctx, w, ok)
		return true, err
	}
	broken, err := s.brokenMember(ctx, w)
	if err != nil || broken == "" {
		return false, err
	}
	if m, ok := w.Member(broken); ok {
		if _, err := s.runtimes.EndWorldSandbox(ctx, m.SandboxID, runtime.KillVanished); err != nil && !errdefs.IsNotFound(err) {
			s.logger.ErrorContext(ctx, "ending a world's vanished member", "world", w.ID, "member", broken, "err", err)
		}
	}
	s.teardown(ctx, w, runtime.KillInterrupted)
	w.Spec.Error = "member " + broken + "'s compute was gone or stopped when the server started"
	s.logger.WarnContext(ctx, "world torn down at start-up", "world", w.ID, "member", broken)
	_, err = s.write(ctx, &w, store.WorldFailed, w.Status)
	return true, err
}

// logTornDown logs a world left starting or deleting that was torn down,
// if this reconciliation recorded its end (ok) rather than another.
func (s *Service) logTornDown(ctx context.Context, w World, ok bool) {
	if ok {
		s.logger.WarnContext(ctx, "tore down a world its server left "+w.Status, "world", w.ID, "runner", w.Runner)
	}
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
// removed.
func (s *Service) removeStrayNetworks(ctx context.Context, owned map[string]bool) error {
	nets, err := s.runtimes.WorldNetworks(ctx)
	if err != nil {
		return err
	}
	for prov, ids := range nets {
		for _, id := range ids {
			if owned[id] {
				continue
			}
			if w, err := s.store.GetWorld(ctx, id); err == nil && !store.WorldFinal(w.Status) {
				continue
			} else if err != nil && !errdefs.IsNotFound(err) {
				return err
			}
			if err := s.runtimes.RemoveWorldNetwork(ctx, prov, id); err != nil {
				return err
			}
			s.logger.WarnContext(ctx, "removed a stray world network", "provider", prov, "world", id)
		}
	}
	return nil
}
