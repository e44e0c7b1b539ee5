package runtime

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// A task's sandbox (internal/task) is compute outside any runtime's state
// machine: a ledger row of kind task, made from a runtime's configuration
// (or one given inline), held and charged like a runtime's, with a fresh
// workspace of its own that goes with it. Nothing but its task acts on it:
// it is never paused, woken or claimed from a warm pool, and the runtime
// it was made from never points at it.

// TaskSource checks an inline configuration for a task in ws as a
// project's would be, and returns the runtime-shaped source a task's
// sandbox is made from (no id: it backs no runtime).
func (s *Service) TaskSource(ctx context.Context, ws store.Workspace, req ConfigRequest) (store.Runtime, error) {
	cfg, err := s.resolveConfig(ctx, ws.OrgID, req)
	if err == nil {
		err = checkRulesApply(cfg.Network.Mode, cfg.Network.Allow, cfg.Network.Deny)
	}
	if err == nil {
		err = s.checkOffered(ctx, cfg)
	}
	if err == nil {
		err = s.checkImagePresent(ctx, cfg)
	}
	src := store.Runtime{OrgID: ws.OrgID, WorkspaceID: ws.ID, Config: cfg}
	if err == nil {
		err = s.checkSecretRefs(ctx, src, cfg)
	}
	return src, err
}

// taskVolume names the workspace volume of the task sandbox id.
func (s *Service) taskVolume(id string) string { return s.defaults.WorkspaceVolPrefix + "task-" + id }

// taskLink keys a task sandbox's agent client in the pool, apart from
// the runtimes'.
func taskLink(id string) string { return "task/" + id }

// StartTaskSandbox provisions and starts the sandbox id, of kind task,
// from src's configuration, its row expiring after limit. The caller
// names the row first (a task records it before it exists, so a server
// that dies meanwhile leaves nothing unaccounted for). It is held for and
// charged like a start; any failure destroys what was made and kills the
// row as provision_failed, and the public error is returned.
func (s *Service) StartTaskSandbox(ctx context.Context, id string, src store.Runtime, limit time.Duration) (store.Sandbox, error) {
	return s.startLoose(ctx, loose{id: id, kind: store.KindTask, src: src, limit: limit, volume: s.taskVolume(id)})
}

// loose is a sandbox outside every runtime's state machine: a task's or
// a world member's.
type loose struct {
	id     string
	kind   store.SandboxKind
	src    store.Runtime
	limit  time.Duration // its row's expiry from its start; 0 for none
	volume string        // its own workspace volume, which goes with it
	// group and member put it on a group's private network (a world's).
	group, member string
}

// startLoose provisions and starts l's sandbox through the ledger, as
// StartTaskSandbox says.
func (s *Service) startLoose(ctx context.Context, l loose) (store.Sandbox, error) {
	c := l.src.Config
	p, err := s.providers.Get(c.Provider)
	if err == nil {
		err = available(p)
	}
	if err == nil {
		err = s.checkImage(ctx, l.src.OrgID, c.Provider, c.Image)
	}
	if images := s.imagesFor(c.Provider); err == nil && images != nil {
		err = images.Check(ctx, c.Image)
	}
	var secretIDs []string
	if err == nil {
		secretIDs, err = s.resolveSecrets(ctx, l.src, c.Network.Mode, nil)
	}
	if err != nil {
		return store.Sandbox{}, err
	}
	sb := s.newRow(l.src, p.Name(), c.Image, secretIDs)
	sb.ID, sb.Kind = l.id, l.kind
	err = s.store.InTx(ctx, func(q store.Queries) error {
		if s.billing != nil {
			if err := s.billing.Reserve(ctx, q, sb, sb.CreatedAt); err != nil {
				return err
			}
		}
		return q.CreateSandbox(ctx, sb)
	})
	if err != nil {
		return sb, err
	}
	sb.Version, sb.BillingVersion = 1, 1
	ctx, cancel := s.detached(ctx)
	defer cancel()
	ctx = logs.With(ctx, logs.KeySandbox, sb.ID)
	h, err := s.provisionLoose(ctx, p, l, &sb)
	if err != nil {
		return s.failLoose(ctx, p, sb, h, l.volume, err)
	}
	now := s.now()
	var expires time.Time
	if l.limit > 0 {
		expires = now.Add(l.limit)
	}
	err = s.store.InTx(ctx, func(q store.Queries) error {
		if _, err := q.MarkSandboxRunning(ctx, sb.ID, sb.Version, now, expires); err != nil {
			return err
		}
		if s.billing != nil {
			return s.billing.Capture(ctx, q, sb.ID, now)
		}
		return nil
	})
	if err != nil {
		return s.failLoose(ctx, p, sb, h, l.volume, err)
	}
	s.logger.InfoContext(ctx, string(l.kind)+" sandbox started", "sandbox", sb.ID, "provider_sandbox_id", h.ID)
	return s.store.GetSandbox(ctx, sb.ID)
}

// provisionLoose creates and starts the compute of l's row sb, recording
// its handle on sb; it returns the handle of what exists.
func (s *Service) provisionLoose(ctx context.Context, p provider.Provider, l loose, sb *store.Sandbox) (*provider.Handle, error) {
	spec := s.spec(l.src, sb.ID, sb.Image)
	spec.Workspace = l.volume
	spec.Group, spec.GroupName = l.group, l.member
	h, err := p.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	recorded, err := s.store.RecordSandboxProvider(ctx, sb.ID, sb.Version, h.ID, h.State, s.now())
	if err != nil {
		return &h, err
	}
	*sb = recorded
	return &h, p.Start(ctx, h)
}

// failLoose undoes a loose sandbox's start: the compute and its workspace
// are destroyed, the hold released and the row killed.
func (s *Service) failLoose(ctx context.Context, p provider.Provider, sb store.Sandbox, h *provider.Handle, volume string, cause error) (store.Sandbox, error) {
	pubErr := providerFailure("start", cause)
	s.logger.WarnContext(ctx, string(sb.Kind)+" sandbox start failed", "sandbox", sb.ID, "err", cause)
	ctx, cancel := s.detached(ctx)
	defer cancel()
	if h != nil {
		if err := p.Destroy(ctx, *h); err != nil && !errdefs.IsNotFound(err) {
			s.logger.ErrorContext(ctx, "destroying a failed sandbox", "sandbox", sb.ID, "err", err)
		}
	}
	s.removeVolume(ctx, p, sb.ID, volume)
	msg := "provisioning failed"
	if pe, ok := errdefs.Public(pubErr); ok {
		msg = pe.Message
	}
	now := s.now()
	err := s.store.InTx(ctx, func(q store.Queries) error {
		if err := s.settle(ctx, q, sb.ID, now); err != nil {
			return err
		}
		cur, err := q.GetSandbox(ctx, sb.ID)
		if err != nil {
			return err
		}
		sb, err = q.KillSandbox(ctx, cur.ID, cur.Version, KillProvisionFailed, msg, now)
		return err
	})
	if err != nil {
		s.logger.ErrorContext(ctx, "recording a failed sandbox", "sandbox", sb.ID, "err", err)
	}
	return sb, pubErr
}

// TaskAgent returns a client of the running task sandbox sb's agent.
func (s *Service) TaskAgent(sb store.Sandbox) (*agentconn.Client, error) {
	return s.looseAgent(sb, taskLink(sb.ID))
}

// looseAgent returns a client of the running loose sandbox sb's agent,
// kept in the pool under link.
func (s *Service) looseAgent(sb store.Sandbox, link string) (*agentconn.Client, error) {
	p, err := s.providers.Get(sb.Provider)
	if err != nil {
		return nil, err
	}
	if !p.Capabilities().Agent {
		return nil, errdefs.NotImplemented(CodeAgentNotSupported, "provider %s does not run the sandbox agent: a %s cannot run there", p.Name(), sb.Kind)
	}
	return s.agents.get(context.Background(), link, sb, p) // a loose sandbox's link is never adopted: no wait
}

// EndTaskSandbox destroys a task sandbox's compute and workspace, settles
// it and kills its row with reason; a row killed already (its compute
// deleted through the ledger) keeps its reason, and its workspace goes.
func (s *Service) EndTaskSandbox(ctx context.Context, sandboxID, reason string) (store.Sandbox, error) {
	return s.endLoose(ctx, sandboxID, reason, taskLink(sandboxID), s.taskVolume(sandboxID))
}

// endLoose ends a loose sandbox as EndTaskSandbox says; its agent's
// client is under link and its workspace is volume.
func (s *Service) endLoose(ctx context.Context, sandboxID, reason, link, volume string) (store.Sandbox, error) {
	ctx, cancel := s.detached(ctx)
	defer cancel()
	s.agents.forget(link, "")
	sb, err := s.store.GetSandbox(ctx, sandboxID)
	if err != nil {
		return sb, err
	}
	p, err := s.providers.Get(sb.Provider)
	if err != nil {
		return sb, err
	}
	if sb.State != store.SandboxKilled {
		if err := s.destroy(ctx, sb); err != nil {
			return sb, err
		}
		now := s.now()
		err := s.store.InTx(ctx, func(q store.Queries) error {
			if err := s.settle(ctx, q, sb.ID, now); err != nil {
				return err
			}
			_, _, err := killRow(ctx, q, sb.ID, reason, now)
			return err
		})
		if err != nil {
			return sb, err
		}
	}
	s.removeVolume(ctx, p, sb.ID, volume)
	return s.store.GetSandbox(ctx, sb.ID)
}

// removeVolume removes a loose sandbox's workspace, where its provider
// keeps workspaces apart from compute.
func (s *Service) removeVolume(ctx context.Context, p provider.Provider, id, volume string) {
	wr, ok := p.(provider.WorkspaceRemover)
	if !ok {
		return
	}
	if err := wr.RemoveWorkspace(ctx, volume); err != nil && !errdefs.IsNotFound(err) {
		s.logger.WarnContext(ctx, "removing a sandbox's workspace", "sandbox", id, "err", err)
	}
}
