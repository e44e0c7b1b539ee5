package runtime

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// KillArchived is the kill reason of a sandbox whose runtime was archived.
const KillArchived = "archived"

// archiveAfter is how long rt may stay paused before it is archived;
// negative means never.
func (s *Service) archiveAfter(rt store.Runtime) time.Duration {
	if rt.Config.ArchiveAfterSeconds > 0 {
		return time.Duration(rt.Config.ArchiveAfterSeconds) * time.Second
	}
	return s.defaults.ArchiveAfter
}

// ArchiveIfDue archives a runtime that has been paused longer than its
// archive threshold at now, and reports whether it did. Archiving saves
// the sandbox's filesystem changes as a provider snapshot (the workspace
// volume is kept as it is), kills the ledger row with reason archived,
// releases the compute, and leaves the runtime archived with no sandbox;
// the next start, resume or operation restores it from the snapshot.
//
// The ledger is written before the compute is destroyed: if the server
// dies between the two, the reconciler removes the compute of a killed row.
// A provider that cannot snapshot leaves its runtimes paused.
func (s *Service) ArchiveIfDue(ctx context.Context, runtimeID string, now time.Time) (bool, error) {
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (bool, error) {
		after := s.archiveAfter(rt)
		if rt.Status != store.RuntimePaused || rt.CurrentSandboxID == "" || after < 0 {
			return false, nil
		}
		sb, err := s.store.GetSandbox(ctx, rt.CurrentSandboxID)
		if err != nil {
			return false, err
		}
		if sb.State != store.SandboxPaused || sb.PausedAt.IsZero() || sb.PausedAt.Add(after).After(now) {
			return false, nil
		}
		p, err := s.providers.Get(sb.Provider)
		if err != nil {
			return false, err
		}
		snap, ok := p.(provider.Snapshotter)
		if !ok || !p.Capabilities().Snapshot {
			return false, nil
		}

		ref, err := snap.Snapshot(ctx, handleOf(sb), map[string]string{
			provider.LabelManaged:  "true",
			provider.LabelInstance: s.instance,
			provider.LabelRuntime:  rt.ID,
			provider.LabelSandbox:  sb.ID,
		})
		if errdefs.IsNotFound(err) {
			_, err := s.vanished(ctx, rt, sb, err)
			return false, err
		}
		if err != nil {
			return false, providerFailure("snapshot", err)
		}

		old := rt.Snapshot
		at := s.now()
		err = s.store.InTx(ctx, func(q store.Queries) error {
			if err := s.settle(ctx, q, sb.ID, at); err != nil {
				return err
			}
			if err := killRow(ctx, q, sb.ID, KillArchived, at); err != nil {
				return err
			}
			rt.Status = store.RuntimeArchived
			rt.StatusReason = ""
			rt.CurrentSandboxID = ""
			rt.Snapshot = ref
			rt.UpdatedAt = at
			return saveRuntime(ctx, q, &rt)
		})
		if err != nil {
			s.removeSnapshot(ctx, p, ref)
			return false, err
		}
		if err := s.destroy(ctx, sb); err != nil {
			// The row is killed: the reconciler removes what is left.
			s.logger.WarnContext(ctx, "releasing an archived sandbox", "sandbox", sb.ID, "err", err)
		}
		if old != "" && old != ref {
			s.removeSnapshot(ctx, p, old)
		}
		s.logger.InfoContext(ctx, "archived runtime", "runtime", rt.ID, "sandbox", sb.ID, "snapshot", ref)
		return true, nil
	})
}

// dropSnapshot forgets rt's snapshot and deletes it from the provider. The
// caller holds the runtime's lock.
func (s *Service) dropSnapshot(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
	if rt.Snapshot == "" {
		return rt, nil
	}
	ref := rt.Snapshot
	rt.Snapshot = ""
	rt.UpdatedAt = s.now()
	rt, err := s.store.UpdateRuntime(ctx, rt)
	if err != nil {
		return rt, lostRace(rt, err)
	}
	if p, err := s.providers.Get(rt.Config.Provider); err == nil {
		s.removeSnapshot(ctx, p, ref)
	}
	return rt, nil
}

// removeSnapshot deletes a snapshot nothing refers to any more. A failure
// is logged: it costs disk, not correctness.
func (s *Service) removeSnapshot(ctx context.Context, p provider.Provider, ref string) {
	snap, ok := p.(provider.Snapshotter)
	if !ok {
		return
	}
	if err := snap.RemoveSnapshot(ctx, ref); err != nil {
		s.logger.WarnContext(ctx, "removing a snapshot", "snapshot", ref, "err", err)
	}
}
