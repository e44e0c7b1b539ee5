package host

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// DefaultTeardownEvery is how often the server looks for idle machines
// unless configured.
const DefaultTeardownEvery = 30 * time.Second

// Runtimes is what auto-teardown asks of the runtime service: to archive
// a paused runtime on the machine now (its snapshot and workspace stay
// on the machine), with the ledger and the audit seeing it.
type Runtimes interface {
	ArchiveForTeardown(ctx context.Context, runtimeID string) (bool, error)
}

// tearable is a machine's provider that can be torn down.
type tearable interface {
	Teardown(ctx context.Context, command string) error
}

// Run tears down idle machines every every (DefaultTeardownEvery when
// not positive) until ctx ends.
func (s *Service) Run(ctx context.Context, rts Runtimes, every time.Duration) {
	if every <= 0 {
		every = DefaultTeardownEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.TeardownIdle(ctx, rts, s.cfg.Now()); err != nil && ctx.Err() == nil {
			s.logger.WarnContext(ctx, "tearing down idle machines", "err", err)
		}
	}
}

// TeardownIdle does one round of auto-teardown at now. A machine with a
// sandbox running (or starting) on it is in use: its state is ready and
// its last use now. One with idle_teardown set, torn down not yet, and no
// sandbox run on it for that long, is torn down: its paused runtimes are
// archived through the runtime service (one that cannot be archived
// without losing its root keeps the machine up), then the machine's run
// directory is removed, its teardown command run and its link closed, and
// its state becomes torn_down. One machine's failure does not stop the
// round for the others.
func (s *Service) TeardownIdle(ctx context.Context, rts Runtimes, now time.Time) error {
	after := ""
	for {
		hs, err := s.cfg.Store.ListHostsAfter(ctx, after, store.MaxLimit)
		if err != nil {
			return err
		}
		for _, h := range hs {
			if err := s.teardownIfIdle(ctx, rts, h, now); err != nil {
				s.logger.WarnContext(ctx, "an idle machine could not be torn down", "host", h.ID, "name", h.Name, "err", err)
			}
		}
		if len(hs) < store.MaxLimit {
			return nil
		}
		after = hs[len(hs)-1].ID
	}
}

func (s *Service) teardownIfIdle(ctx context.Context, rts Runtimes, h store.Host, now time.Time) error {
	running, paused, err := s.sandboxesOn(ctx, h)
	if err != nil {
		return err
	}
	if running > 0 {
		return s.cfg.Store.SetHostState(ctx, h.ID, store.HostReady, now)
	}
	if h.IdleTeardown <= 0 || h.State == store.HostTornDown || now.Before(h.LastUsedAt.Add(h.IdleTeardown)) {
		return nil
	}
	for _, rid := range paused {
		archived, err := rts.ArchiveForTeardown(ctx, rid)
		if err != nil {
			return err
		}
		if !archived {
			s.logger.InfoContext(ctx, "an idle machine stays up: a runtime on it cannot be archived", "host", h.ID, "runtime", rid)
			return nil
		}
	}
	s.mu.Lock()
	p, _ := s.owned[h.ProviderName()].(tearable)
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	// Of replicas at this round, the one that moves the state tears down.
	if claimed, err := s.cfg.Store.ClaimHostTeardown(ctx, h.ID, h.LastUsedAt); err != nil || !claimed {
		return err
	}
	if err := p.Teardown(ctx, h.TeardownCommand); err != nil {
		return errors.Join(err, s.cfg.Store.SetHostState(context.WithoutCancel(ctx), h.ID, store.HostReady, h.LastUsedAt))
	}
	s.logger.InfoContext(ctx, "idle machine torn down", "host", h.ID, "org", h.OrgID, "name", h.Name, "idle_since", h.LastUsedAt)
	return nil
}

// sandboxesOn counts the sandboxes running or starting on h, and lists
// the runtimes of those paused there.
func (s *Service) sandboxesOn(ctx context.Context, h store.Host) (running int, paused []string, err error) {
	for _, st := range []store.SandboxState{store.SandboxStarting, store.SandboxRunning, store.SandboxPaused} {
		page := store.Page{Limit: store.MaxLimit}
		for {
			sbs, next, err := s.cfg.Store.ListSandboxes(ctx, store.SandboxFilter{OrgID: h.OrgID, Provider: h.ProviderName(), State: st}, page)
			if err != nil {
				return 0, nil, err
			}
			for _, sb := range sbs {
				if st != store.SandboxPaused {
					running++
				} else if sb.RuntimeID != "" {
					paused = append(paused, sb.RuntimeID)
				}
			}
			if next == "" {
				break
			}
			page.Cursor = next
		}
	}
	return running, paused, nil
}
