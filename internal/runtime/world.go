package runtime

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// A world's members (internal/world) are sandboxes outside any runtime's
// state machine, as a task's is: ledger rows of kind world, held and
// charged like a runtime's, each with a fresh workspace of its own that
// goes with it, all on their world's private network (provider.Grouper),
// where each is reached by its member name. Nothing but its world acts on
// one: it never expires by itself, is never woken or claimed from a warm
// pool, and is paused and resumed only with its world.

// CodeWorldNotSupported: the provider cannot put a world's members on a
// private network of their own.
const CodeWorldNotSupported = "world_not_supported"

// worldVolume names the workspace volume of the world member sandbox id.
func (s *Service) worldVolume(id string) string { return s.defaults.WorkspaceVolPrefix + "world-" + id }

// worldLink keys a world member's agent client in the pool.
func worldLink(id string) string { return "world/" + id }

// grouper is providerName's provider as a Grouper, or world_not_supported.
func (s *Service) grouper(providerName string) (provider.Grouper, error) {
	p, err := s.providers.Get(providerName)
	if err != nil {
		return nil, err
	}
	inner := p
	for {
		w, ok := inner.(interface{ Unwrap() provider.Provider })
		if !ok {
			break
		}
		inner = w.Unwrap()
	}
	_, can := inner.(provider.Grouper)
	g, ok := p.(provider.Grouper)
	if !ok || !can {
		return nil, errdefs.FailedPrecondition(CodeWorldNotSupported,
			"provider %s cannot put a world's members on a private network of their own: use a Docker provider", p.Name())
	}
	return g, nil
}

// WorldsSupported answers world_not_supported unless providerName's
// provider can put a world on a private network.
func (s *Service) WorldsSupported(providerName string) error {
	_, err := s.grouper(providerName)
	return err
}

// CreateWorldNetwork makes world's private network on providerName.
func (s *Service) CreateWorldNetwork(ctx context.Context, providerName, world string) error {
	g, err := s.grouper(providerName)
	if err != nil {
		return err
	}
	if err := g.CreateGroup(ctx, world); err != nil {
		return providerFailure("create the network of", err)
	}
	return nil
}

// RemoveWorldNetwork removes world's private network on providerName.
func (s *Service) RemoveWorldNetwork(ctx context.Context, providerName, world string) error {
	ctx, cancel := s.detached(ctx)
	defer cancel()
	g, err := s.grouper(providerName)
	if err != nil {
		return err
	}
	return g.RemoveGroup(ctx, world)
}

// WorldNetworks lists, per provider, the worlds whose networks exist.
func (s *Service) WorldNetworks(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	for _, name := range s.providers.Names() {
		g, err := s.grouper(name)
		if err != nil {
			continue
		}
		ids, err := g.Groups(ctx)
		if err != nil {
			return nil, err
		}
		out[name] = ids
	}
	return out, nil
}

// StartWorldSandbox provisions and starts the sandbox id, of kind world,
// from src's configuration, on world's network as member; as
// StartTaskSandbox, but with no expiry.
func (s *Service) StartWorldSandbox(ctx context.Context, id string, src store.Runtime, world, member string) (store.Sandbox, error) {
	return s.startLoose(ctx, loose{id: id, kind: store.KindWorld, src: src, volume: s.worldVolume(id), group: world, member: member})
}

// WorldAgent returns a client of the running world member sb's agent.
func (s *Service) WorldAgent(sb store.Sandbox) (*agentconn.Client, error) {
	return s.looseAgent(sb, worldLink(sb.ID))
}

// EndWorldSandbox destroys a world member's compute and workspace,
// settles it and kills its row with reason, as EndTaskSandbox.
func (s *Service) EndWorldSandbox(ctx context.Context, sandboxID, reason string) (store.Sandbox, error) {
	return s.endLoose(ctx, sandboxID, reason, worldLink(sandboxID), s.worldVolume(sandboxID))
}

// InspectWorldSandbox observes a world member's compute.
func (s *Service) InspectWorldSandbox(ctx context.Context, sb store.Sandbox) (provider.Status, error) {
	p, err := s.providers.Get(sb.Provider)
	if err != nil {
		return provider.Status{}, err
	}
	return p.Inspect(ctx, handleOf(sb))
}

// PauseWorldSandbox suspends a running world member and closes its
// books; a paused one is returned as it is.
func (s *Service) PauseWorldSandbox(ctx context.Context, sandboxID string) (store.Sandbox, error) {
	return s.moveLoose(ctx, sandboxID, store.SandboxRunning, func(p provider.Provider, sb store.Sandbox) error {
		if !p.Capabilities().Pause {
			return errdefs.FailedPrecondition(CodeWorldNotSupported, "provider %s cannot pause a sandbox: a world there cannot be paused", p.Name())
		}
		return p.Pause(ctx, handleOf(sb))
	})
}

// ResumeWorldSandbox continues a paused world member, holding its first
// slice of credits again; a running one is returned as it is.
func (s *Service) ResumeWorldSandbox(ctx context.Context, sandboxID string) (store.Sandbox, error) {
	return s.moveLoose(ctx, sandboxID, store.SandboxPaused, func(p provider.Provider, sb store.Sandbox) error {
		if s.billing != nil {
			err := s.store.InTx(ctx, func(q store.Queries) error { return s.billing.Reserve(ctx, q, sb, s.now()) })
			if err != nil {
				return err
			}
		}
		return p.Resume(ctx, handleOf(sb))
	})
}

// moveLoose moves a loose sandbox in state from to the other of running
// and paused with act, and writes its books and its new state.
func (s *Service) moveLoose(ctx context.Context, sandboxID string, from store.SandboxState, act func(provider.Provider, store.Sandbox) error) (store.Sandbox, error) {
	before, err := s.store.GetSandbox(ctx, sandboxID)
	if err != nil || before.State != from {
		return before, err
	}
	p, err := s.providers.Get(before.Provider)
	if err != nil {
		return before, err
	}
	if err := act(p, before); err != nil {
		s.settleAfterFailure(ctx, before)
		return before, providerFailure("change the state of", err)
	}
	now := s.now()
	sb := before
	if from == store.SandboxRunning {
		sb.State, sb.PauseReason, sb.PausedAt = store.SandboxPaused, store.PauseUser, now
	} else {
		sb.State, sb.PauseReason, sb.PausedAt, sb.RunningSince, sb.ExpiresAt = store.SandboxRunning, store.PauseNone, time.Time{}, now, time.Time{}
	}
	err = s.store.InTx(ctx, func(q store.Queries) error {
		if err := s.bill(ctx, q, before, sb, now); err != nil {
			return err
		}
		return recordChange(ctx, q, before, sb)
	})
	if err != nil {
		s.settleAfterFailure(ctx, before)
		return before, err
	}
	return s.store.GetSandbox(ctx, sandboxID)
}
