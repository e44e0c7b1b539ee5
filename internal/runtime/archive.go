package runtime

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// archiveAfter is how long rt may stay paused before it is archived;
// negative means never.
func (s *Service) archiveAfter(rt store.Runtime) time.Duration {
	if rt.Config.ArchiveAfterSeconds > 0 {
		return time.Duration(rt.Config.ArchiveAfterSeconds) * time.Second
	}
	return s.defaults.ArchiveAfter
}

// ArchiveIfDue archives a runtime that has been paused longer than its
// archive threshold at now, and reports whether it did (see archive).
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
		if !canArchive(p, rt) {
			return false, nil // it stays paused: archiving would lose its root's changes
		}
		return true, s.archive(ctx, p, rt, sb)
	})
}

// canArchive reports whether rt's compute can be released without losing
// work: its provider can snapshot its filesystem, or the runtime's root is
// read-only, so everything it keeps is in the workspace volume, which
// outlives the compute.
func canArchive(p provider.Provider, rt store.Runtime) bool {
	_, ok := p.(provider.Snapshotter)
	return (ok && p.Capabilities().Snapshot) || rt.Config.RootFSMode() != store.RootFSWritable
}

// archive saves the sandbox's filesystem changes as a provider snapshot
// when the provider can take one (the workspace volume is kept as it is),
// kills the ledger row with reason archived after settling it, releases
// the compute, and leaves the runtime archived with no sandbox; the next
// start, resume or operation restores it, from the snapshot if there is
// one, else from its image with the same workspace. It works on running
// and paused compute: a provider that cannot pause archives where another
// would pause (see Pause). The caller holds the runtime's lock and checked
// canArchive.
//
// The ledger is written before the compute is destroyed: if the server
// dies between the two, the reconciler removes the compute of a killed row.
func (s *Service) archive(ctx context.Context, p provider.Provider, rt store.Runtime, sb store.Sandbox) (retErr error) {
	defer s.observe("archive", time.Now(), &retErr)
	var ref string
	if snap, ok := p.(provider.Snapshotter); ok && p.Capabilities().Snapshot {
		var err error
		ref, err = snap.Snapshot(ctx, handleOf(sb), map[string]string{
			provider.LabelManaged:  "true",
			provider.LabelInstance: s.instance,
			provider.LabelRuntime:  rt.ID,
			provider.LabelSandbox:  sb.ID,
		})
		if errdefs.IsNotFound(err) {
			_, err := s.vanished(ctx, rt, sb, err)
			return err
		}
		if err != nil {
			return providerFailure("snapshot", err)
		}
	}

	old := rt.Snapshot
	at := s.now()
	killed := sb
	err := s.store.InTx(ctx, func(q store.Queries) error {
		if err := s.settle(ctx, q, sb.ID, at); err != nil {
			return err
		}
		var err error
		if killed, _, err = killRow(ctx, q, sb.ID, KillArchived, at); err != nil {
			return err
		}
		r, err := setState(ctx, q, rt, store.RuntimeState{Status: store.RuntimeArchived}, at)
		if err == nil && r.Snapshot != ref {
			r, err = setSnapshot(ctx, q, r, ref, at)
		}
		if err == nil {
			rt = r
		}
		return err
	})
	if err != nil {
		if ref != "" {
			s.removeSnapshot(ctx, p, ref)
		}
		return err
	}
	if err := s.destroy(ctx, sb); err != nil {
		// The row is killed: the reconciler removes what is left.
		s.logger.WarnContext(ctx, "releasing an archived sandbox", "sandbox", sb.ID, "err", err)
	}
	if old != "" && old != ref {
		s.removeSnapshot(ctx, p, old)
	}
	s.logger.InfoContext(ctx, "archived runtime", "runtime", rt.ID, "sandbox", sb.ID, "snapshot", ref)
	s.publish(Event{Kind: EventArchived, Runtime: rt, Sandbox: killed, Reason: KillArchived, At: at})
	return nil
}

// dropSnapshot forgets rt's snapshot and deletes it from the provider. The
// caller holds the runtime's lock.
func (s *Service) dropSnapshot(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
	if rt.Snapshot == "" {
		return rt, nil
	}
	ref := rt.Snapshot
	rt, err := setSnapshot(ctx, s.store, rt, "", s.now())
	if err != nil {
		return rt, err
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
