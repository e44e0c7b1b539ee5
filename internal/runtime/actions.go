package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/logs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// Start provisions a sandbox for an idle or archived runtime: a ledger row
// of kind runtime is written in state starting, the provider creates and
// starts the compute (or a warm sandbox is claimed), and the row and
// runtime become running. An archived runtime's sandbox is created from its
// snapshot. Any failure destroys what was created, kills the row with the
// reason and leaves the runtime in error.
func (s *Service) Start(ctx context.Context, runtimeID string, secretIDs []string) (store.Runtime, error) {
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		return s.start(ctx, rt, secretIDs)
	})
}

// start is Start with the runtime's lock held and rt freshly read.
func (s *Service) start(ctx context.Context, rt store.Runtime, secretIDs []string) (_ store.Runtime, retErr error) {
	defer s.observe("start", time.Now(), &retErr)
	p, err := s.startable(ctx, rt)
	if err != nil {
		return rt, err
	}
	kind := "start"
	if rt.Status == store.RuntimeArchived {
		kind = "restore"
	}
	tr := s.provisions.begin(Provision{RuntimeID: rt.ID, OrgID: rt.OrgID, Provider: p.Name(), Kind: kind}, time.Now)
	defer func() { tr.end(retErr) }()
	image := rt.Config.Image
	if rt.Status == store.RuntimeArchived && rt.Snapshot != "" {
		image = rt.Snapshot // restore what was archived
	} else if err := s.checkImage(ctx, rt.OrgID, rt.Config.Provider, image); err != nil {
		// Configured before the allow-list said otherwise.
		return rt, errdefs.FailedPrecondition(CodeImageNotAllowed, "the runtime's image %q is not allowed on this installation; create a project with an allowed image", image).WithCause(err)
	}
	// Secrets are resolved before anything exists: an unknown one starts
	// nothing.
	err = tr.step("resolve_secrets", func() (err error) {
		secretIDs, err = s.resolveSecrets(ctx, rt, rt.Config.Network.Mode, secretIDs)
		return err
	})
	if err != nil {
		return rt, err
	}
	sb := s.newRow(rt, p.Name(), image, secretIDs)
	warm, err := s.reserve(ctx, tr, p, &rt, &sb)
	if err != nil {
		return rt, err
	}
	ctx = logs.With(ctx, logs.KeySandbox, sb.ID)
	h, err := s.provision(ctx, tr, p, rt, &sb, warm, image)
	if err != nil {
		return s.failStart(ctx, p, rt, sb, h, err)
	}
	if sb.State != store.SandboxRunning { // a running warm sandbox's claim marked it already
		if err := s.markStarted(ctx, tr, &rt, &sb); err != nil {
			return s.failStart(ctx, p, rt, sb, h, err)
		}
	}
	s.logger.InfoContext(ctx, "runtime started", "runtime", rt.ID, "sandbox", sb.ID, "provider_sandbox_id", h.ID,
		"warm", warm != nil, "restored", image != rt.Config.Image)
	s.publish(Event{Kind: EventRunning, Runtime: rt, Sandbox: sb, Fresh: true, At: sb.RunningSince})
	return rt, nil
}

// startable returns the provider rt starts on, or why it cannot start
// now; nothing is recorded either way.
func (s *Service) startable(ctx context.Context, rt store.Runtime) (provider.Provider, error) {
	if rt.Status != store.RuntimeIdle && rt.Status != store.RuntimeArchived {
		return nil, statusConflict("start", s.name(ctx, rt), rt)
	}
	p, err := s.providers.Get(rt.Config.Provider)
	if err != nil {
		return nil, err
	}
	if err := available(p); err != nil {
		return nil, err // nothing is recorded against a provider known to be down
	}
	if images := s.imagesFor(rt.Config.Provider); images != nil && (rt.Status != store.RuntimeArchived || rt.Snapshot == "") {
		// An image still being built: the caller is told so, and when
		// to try again, before anything is recorded.
		if err := images.Check(ctx, rt.Config.Image); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// newRow is the ledger row, in state starting, of a sandbox of rt on
// providerName running image.
func (s *Service) newRow(rt store.Runtime, providerName, image string, secretIDs []string) store.Sandbox {
	now := s.now()
	return store.Sandbox{
		ID:          newID(),
		OrgID:       rt.OrgID,
		WorkspaceID: rt.WorkspaceID,
		ProjectID:   rt.ProjectID,
		RuntimeID:   rt.ID,
		Kind:        store.KindRuntime,
		State:       store.SandboxStarting,
		Provider:    providerName,
		Image:       image,
		CPUMillis:   rt.Config.CPUMillis,
		MemoryMB:    rt.Config.MemoryMB,
		SecretIDs:   secretIDs,
		Network:     rt.Config.Network.Mode,
		CreatedAt:   now,
		UpdatedAt:   now,
	}
}

// reserve writes the row sb, holding its first charge, and moves rt to
// starting, in one transaction; a warm sandbox is claimed for it when
// one fits, and returned. A claimed sandbox of a running pool that p has
// nothing to relabel on is all the compute there is to wait for: the same
// transaction then marks sb and rt running (markRunning), and the claim
// is one transaction. sb and rt are left as stored.
func (s *Service) reserve(ctx context.Context, tr *tracked, p provider.Provider, rt *store.Runtime, sb *store.Sandbox) (*store.WarmSandbox, error) {
	template, warmable := s.warmTemplate(sb.Provider, *rt)
	warmable = warmable && rt.Status == store.RuntimeIdle && rt.Snapshot == ""
	_, relabels := relabeler(p)
	runningClaim := warmable && s.warmRunning(template) && !relabels
	now := sb.CreatedAt
	var warm *store.WarmSandbox
	var starting store.Runtime // rt and sb as the starting event tells of them
	var startingRow, claimed store.Sandbox
	err := tr.step("reserve", func() error {
		return s.store.InTx(ctx, func(q store.Queries) error {
			row := *sb
			if warmable {
				w, err := s.claimWarm(ctx, q, *rt, template)
				if err != nil {
					return err
				}
				if w != nil {
					warm = w
					row.ID = w.ID // the compute's labels already name this row
					row.ProviderSandboxID = w.ProviderSandboxID
					row.ProviderState = w.ProviderState
				}
			}
			// The hold comes first: an org that cannot pay gets nothing.
			if s.billing != nil {
				if err := s.billing.Reserve(ctx, q, row, now); err != nil {
					return err
				}
			}
			if err := q.CreateSandbox(ctx, row); err != nil {
				return err
			}
			row.Version, row.BillingVersion = 1, 1 // as CreateSandbox stored it
			r, err := setState(ctx, q, *rt, store.RuntimeState{Status: store.RuntimeStarting, CurrentSandboxID: row.ID}, now)
			if err == nil && warm != nil {
				// The runtime keeps the warm sandbox's workspace.
				r, err = setVolume(ctx, q, r, warm.WorkspaceVolume, now)
			}
			starting, startingRow = r, row
			if err == nil && warm != nil && runningClaim {
				r, err = s.markRunning(ctx, q, r, &row, now)
			}
			if err == nil {
				*rt, claimed = r, row
			}
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	*sb = claimed
	tr.set(func(p *Provision) { p.SandboxID, p.Warm = sb.ID, warm != nil })
	s.publish(Event{Kind: EventStarting, Runtime: starting, Sandbox: startingRow, At: now})
	return warm, nil
}

// provision makes the compute of the reserved row sb run: a claimed warm
// sandbox is relabelled for rt and adopted (resumed, unless its pool keeps
// it running), else
// the provider creates and starts one from image and its handle is
// recorded on sb. It returns the handle of what exists, nil when nothing
// does, for failStart to undo.
func (s *Service) provision(ctx context.Context, tr *tracked, p provider.Provider, rt store.Runtime, sb *store.Sandbox,
	warm *store.WarmSandbox, image string) (*provider.Handle, error) {
	if warm != nil {
		s.warm.kick() // refill behind this claim
		h := &provider.Handle{Provider: p.Name(), ID: warm.ProviderSandboxID, State: warm.ProviderState}
		if r, ok := relabeler(p); ok {
			if err := tr.step("relabel", func() error { return relabelClaimed(ctx, r, *h, rt) }); err != nil {
				return h, err
			}
		}
		if s.warmRunning(warm.Template) {
			// Running, its link open: the claim was all there was to do
			// but the runtime's environment (adoptLink).
			s.adoptLink(ctx, tr, warm.ID, rt.ID, *sb)
			return h, nil
		}
		if p.Capabilities().Pause {
			return h, tr.step("resume", func() error { return p.Resume(ctx, *h) })
		}
		return h, nil
	}
	var h provider.Handle
	err := tr.step("create", func() (err error) { h, err = p.Create(ctx, s.spec(rt, sb.ID, image)); return err })
	if err != nil {
		return nil, err
	}
	err = tr.step("record", func() error {
		recorded, err := s.store.RecordSandboxProvider(ctx, sb.ID, sb.Version, h.ID, h.State, s.now())
		if err == nil {
			*sb = recorded // on failure sb stays the row failStart must undo
		}
		return err
	})
	if err != nil {
		return &h, err
	}
	return &h, tr.step("start", func() error { return p.Start(ctx, h) })
}

// adoptLink gives rt the open link of the running warm sandbox sb it
// claimed, and sends the runtime's environment over it beside the rest of
// the start (agentPool.adopt): the start does not wait for the agent's
// answer, and calls on the link wait for it, so that no process starts
// with the pool's stand-in environment. The provision ends when it is
// through. The agent refusing it is not the start's failure: the link is
// dropped, and the next call's own link configures the agent first, as
// every new link does.
func (s *Service) adoptLink(ctx context.Context, tr *tracked, warmID, runtimeID string, sb store.Sandbox) {
	send := s.agents.adopt(warmID, runtimeID, sb)
	if send == nil {
		return
	}
	ctx, cancel := s.detached(ctx)
	tr.besideStep("adopt_link", func() error { return send(ctx) }, func(err error) {
		cancel()
		if err != nil {
			s.logger.WarnContext(ctx, "sending a claimed sandbox's agent its environment; its next call dials anew",
				"runtime", runtimeID, "sandbox", sb.ID, "err", err)
		}
	})
}

// markStarted marks the row sb and rt running, capturing the first
// charge, in one transaction (markRunning). sb and rt are left as stored.
func (s *Service) markStarted(ctx context.Context, tr *tracked, rt *store.Runtime, sb *store.Sandbox) error {
	now := s.now()
	return tr.step("mark_running", func() error {
		return s.store.InTx(ctx, func(q store.Queries) error {
			row := *sb
			r, err := s.markRunning(ctx, q, *rt, &row, now)
			if err == nil {
				*rt, *sb = r, row
			}
			return err
		})
	})
}

// runningMarker is what markRunning writes through: one transaction's
// queries.
type runningMarker interface {
	BillingTx
	runtimeWriter
	MarkSandboxRunning(ctx context.Context, id string, version int64, at, expires time.Time) (store.Sandbox, error)
}

// markRunning marks the row sb and rt running in q, capturing the first
// charge, with the sandbox's expiry window opening at now; sb is updated
// as written, and rt returned so.
func (s *Service) markRunning(ctx context.Context, q runningMarker, rt store.Runtime, sb *store.Sandbox, now time.Time) (store.Runtime, error) {
	sb.RunningSince = now
	expires := capExpiry(rt, *sb, now.Add(idleTimeout(rt)))
	if _, err := q.MarkSandboxRunning(ctx, sb.ID, sb.Version, now, expires); err != nil {
		return rt, err
	}
	if s.billing != nil {
		if err := s.billing.Capture(ctx, q, sb.ID, now); err != nil {
			return rt, err
		}
	}
	running := rt.State()
	running.Status = store.RuntimeRunning
	r, err := setState(ctx, q, rt, running, now)
	if err == nil {
		sb.State = store.SandboxRunning
		sb.ExpiresAt = expires
	}
	return r, err
}

// trustFor is the CA a sandbox in network mode trusts beside its image's:
// the egress proxy's, in proxy mode.
func (s *Service) trustFor(mode string) []byte {
	if mode != string(provider.NetworkProxy) {
		return nil
	}
	return s.trustedCA
}

// spec is what a runtime's sandbox sandboxID is created from.
func (s *Service) spec(rt store.Runtime, sandboxID, image string) provider.Spec {
	return provider.Spec{
		SandboxID: sandboxID,
		RuntimeID: rt.ID,
		OrgID:     rt.OrgID,
		Instance:  s.instance,
		Image:     image,
		Resources: provider.Resources{
			CPUMillis: rt.Config.CPUMillis,
			MemoryMB:  rt.Config.MemoryMB,
			PidsLimit: rt.Config.PidsLimit,
			DiskMB:    rt.Config.DiskMB,
		},
		Workspace:    rt.WorkspaceVolume,
		Network:      provider.NetworkPolicy(rt.Config.Network.Mode),
		TrustedCA:    s.trustFor(rt.Config.Network.Mode),
		WritableRoot: rt.Config.RootFS == store.RootFSWritable,
		User:         rt.Config.UserName(),
		Env:          rt.Config.Env,
		Labels: map[string]string{
			"dev.paddock.project":      rt.ProjectID,
			"dev.paddock.workspace-id": rt.WorkspaceID,
		},
	}
}

// failStart undoes a start: the compute is destroyed, the row killed with
// the reason, the runtime left in error. It returns the public error.
func (s *Service) failStart(ctx context.Context, p provider.Provider, rt store.Runtime, sb store.Sandbox, h *provider.Handle, cause error) (store.Runtime, error) {
	pubErr := providerFailure("start", cause)
	msg := "provisioning failed"
	if pe, ok := errdefs.Public(pubErr); ok {
		msg = pe.Message
	}
	s.logger.WarnContext(ctx, "runtime start failed", "runtime", rt.ID, "sandbox", sb.ID, "err", cause)
	// The start may have failed because its own time ran out: the cleanup
	// gets time of its own.
	ctx, cancel := s.detached(ctx)
	defer cancel()
	s.forgetAgent(rt.ID, sb.ID) // a claimed warm sandbox's link, if it was adopted
	if h != nil {
		if err := p.Destroy(ctx, *h); err != nil {
			s.logger.ErrorContext(ctx, "destroying a failed sandbox", "sandbox", sb.ID, "err", err)
		}
	}
	now := s.now()
	err := s.store.InTx(ctx, func(q store.Queries) error {
		// No charge for compute that never ran: the hold is released.
		if err := s.settle(ctx, q, sb.ID, now); err != nil {
			return err
		}
		cur, err := q.GetSandbox(ctx, sb.ID)
		if err != nil {
			return err
		}
		if sb, err = q.KillSandbox(ctx, cur.ID, cur.Version, KillProvisionFailed, msg, now); err != nil {
			return err
		}
		r, err := q.GetRuntime(ctx, rt.ID)
		if err != nil {
			return err
		}
		rt, err = setState(ctx, q, r, store.RuntimeState{Status: store.RuntimeError, StatusReason: msg}, now)
		return err
	})
	if err != nil {
		s.logger.ErrorContext(ctx, "recording a failed start", "runtime", rt.ID, "err", err)
		return rt, pubErr
	}
	s.publish(Event{Kind: EventFailed, Runtime: rt, Sandbox: sb, Reason: KillProvisionFailed, At: now})
	return rt, pubErr
}

// Pause suspends a running runtime's sandbox, keeping its state. On a
// provider that cannot pause (Capabilities.Pause false) the runtime is
// archived instead, which stops its compute and its bill just the same:
// its filesystem is kept as a snapshot when the provider can take one, and
// a read-only root keeps everything in its workspace anyway; resume
// restores it. A writable root that could be neither paused nor
// snapshotted is refused when the runtime is configured.
func (s *Service) Pause(ctx context.Context, runtimeID string, reason store.PauseReason) (store.Runtime, error) {
	return s.transition(ctx, runtimeID, "pause", store.RuntimeRunning, func(ctx context.Context, p provider.Provider, rt *store.Runtime, sb *store.Sandbox) error {
		if !p.Capabilities().Pause {
			if err := s.archive(ctx, p, *rt, *sb); err != nil {
				return err
			}
			return errArchived
		}
		if err := p.Pause(ctx, handleOf(*sb)); err != nil {
			return err
		}
		now := s.now()
		sb.State = store.SandboxPaused
		sb.PauseReason = reason
		sb.PausedAt = now
		rt.Status = store.RuntimePaused
		return nil
	})
}

// Resume continues a paused runtime's sandbox and renews its expiry. An
// archived runtime is restored into a new sandbox, as Start would.
func (s *Service) Resume(ctx context.Context, runtimeID string) (store.Runtime, error) {
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		if rt.Status == store.RuntimeArchived {
			return s.start(ctx, rt, nil)
		}
		return s.transitionLocked(ctx, rt, "resume", store.RuntimePaused, s.resume)
	})
}

// resume is the transition that continues a paused sandbox.
func (s *Service) resume(ctx context.Context, p provider.Provider, rt *store.Runtime, sb *store.Sandbox) error {
	if s.billing != nil {
		err := s.store.InTx(ctx, func(q store.Queries) error { return s.billing.Reserve(ctx, q, *sb, s.now()) })
		if err != nil {
			return err
		}
	}
	if err := p.Resume(ctx, handleOf(*sb)); err != nil {
		return err
	}
	now := s.now()
	sb.State = store.SandboxRunning
	sb.PauseReason = store.PauseNone
	sb.PausedAt = time.Time{}
	sb.RunningSince = now
	sb.ExpiresAt = capExpiry(*rt, *sb, now.Add(idleTimeout(*rt)))
	rt.Status = store.RuntimeRunning
	return nil
}

// wake makes a paused or archived runtime running again for an operation
// that needs its sandbox (exec, files, terminals): a paused one is resumed,
// an archived one restored. Concurrent wakers are serialized by the
// runtime's lock, so it wakes once; the others find it running. A runtime
// in any other status is returned as it is.
func (s *Service) wake(ctx context.Context, runtimeID string) (store.Runtime, error) {
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		from := rt.Status
		var err error
		switch from {
		case store.RuntimePaused:
			rt, err = s.transitionLocked(ctx, rt, "resume", store.RuntimePaused, s.resume)
		case store.RuntimeArchived:
			rt, err = s.start(ctx, rt, nil)
		default:
			return rt, nil
		}
		if err == nil {
			s.logger.InfoContext(ctx, "woke runtime for an operation", "runtime", rt.ID, "from", string(from))
		}
		return rt, err
	})
}

// Keepalive extends the sandbox's expiry window to now+d (the runtime's idle
// timeout when d is 0), capped by the installation's maximum. It never
// shortens the window.
func (s *Service) Keepalive(ctx context.Context, runtimeID string, d time.Duration) (store.Runtime, error) {
	if d < 0 {
		return store.Runtime{}, errdefs.InvalidArgument("invalid_duration", "duration_seconds must not be negative")
	}
	return s.transition(ctx, runtimeID, "keepalive", "", func(ctx context.Context, p provider.Provider, rt *store.Runtime, sb *store.Sandbox) error {
		if d == 0 {
			d = idleTimeout(*rt)
		}
		d = min(d, s.defaults.MaxKeepalive)
		if exp := capExpiry(*rt, *sb, s.now().Add(d)); exp.After(sb.ExpiresAt) {
			sb.ExpiresAt = exp
		}
		return nil
	})
}

// transition runs one action on a runtime that has a sandbox. want is the
// status the runtime must be in ("" = running or paused). apply changes the
// provider and then rt and sb in memory; transition stores both in one
// transaction. Compute that vanished under the action kills the row and
// leaves the runtime in error.
func (s *Service) transition(ctx context.Context, runtimeID, action string, want store.RuntimeStatus,
	apply func(ctx context.Context, p provider.Provider, rt *store.Runtime, sb *store.Sandbox) error) (store.Runtime, error) {
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		return s.transitionLocked(ctx, rt, action, want, apply)
	})
}

// transitionLocked is transition with the runtime's lock held and rt
// freshly read.
func (s *Service) transitionLocked(ctx context.Context, rt store.Runtime, action string, want store.RuntimeStatus,
	apply func(ctx context.Context, p provider.Provider, rt *store.Runtime, sb *store.Sandbox) error) (_ store.Runtime, retErr error) {
	defer s.observe(action, time.Now(), &retErr)
	ok := rt.Status == want
	if want == "" {
		ok = rt.Status == store.RuntimeRunning || rt.Status == store.RuntimePaused
	}
	if !ok || rt.CurrentSandboxID == "" {
		return rt, statusConflict(action, s.name(ctx, rt), rt)
	}
	sb, err := s.store.GetSandbox(ctx, rt.CurrentSandboxID)
	if err != nil {
		return rt, err
	}
	ctx = logs.With(ctx, logs.KeySandbox, sb.ID)
	p, err := s.providers.Get(sb.Provider)
	if err != nil {
		return rt, err
	}
	before, was := sb, rt
	if err := apply(ctx, p, &rt, &sb); err != nil {
		if errors.Is(err, errArchived) {
			return s.store.GetRuntime(ctx, rt.ID)
		}
		s.settleAfterFailure(ctx, before)
		if errdefs.IsNotFound(err) {
			return s.vanished(ctx, rt, sb, err)
		}
		return rt, providerFailure(action, err)
	}
	now := s.now()
	sb.UpdatedAt = now
	to := rt.State()
	rt = was
	err = s.store.InTx(ctx, func(q store.Queries) error {
		// The books are closed first, while the row still says how it
		// ran; settlements never move its version, so the write of its
		// new state that follows cannot lose to them.
		if err := s.bill(ctx, q, before, sb, now); err != nil {
			return err
		}
		if err := recordChange(ctx, q, before, sb); err != nil {
			return err
		}
		if to == was.State() {
			return nil // the runtime's row says what it did (a keepalive)
		}
		var err error
		rt, err = setState(ctx, q, was, to, now)
		return err
	})
	if err != nil {
		s.settleAfterFailure(ctx, before)
		return rt, err
	}
	if sb.State != before.State {
		s.logger.InfoContext(ctx, "sandbox "+string(sb.State), "action", action, "from", string(before.State))
		s.publish(Event{Kind: sandboxEvent(sb.State), Runtime: rt, Sandbox: sb, Reason: sb.KillReason, At: now})
	} else if !sb.ExpiresAt.Equal(before.ExpiresAt) {
		s.publish(Event{Kind: EventUpdated, Runtime: rt, Sandbox: sb, At: now})
	}
	return rt, nil
}

// vanished records that a runtime's compute no longer exists.
func (s *Service) vanished(ctx context.Context, rt store.Runtime, sb store.Sandbox, cause error) (store.Runtime, error) {
	s.logger.WarnContext(ctx, "sandbox compute vanished", "runtime", rt.ID, "sandbox", sb.ID, "err", cause)
	rt, err := s.release(ctx, rt, KillVanished, store.RuntimeError)
	if err != nil {
		return rt, err
	}
	return rt, errdefs.Conflict("sandbox_vanished", "the sandbox of runtime %s no longer exists; reset the runtime", rt.ID).WithCause(cause)
}

// Reset destroys the runtime's sandbox (its row is killed with reason reset)
// and returns the runtime to idle with the same id, config and bindings.
// An archived runtime's snapshot is deleted: the next start is clean.
// The workspace volume is kept unless wipeWorkspace. A runtime in error
// with no sandbox is reset too: that is how error is recovered.
func (s *Service) Reset(ctx context.Context, runtimeID string, wipeWorkspace bool) (store.Runtime, error) {
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		switch rt.Status {
		case store.RuntimeRunning, store.RuntimePaused, store.RuntimeError, store.RuntimeArchived:
		default:
			return rt, statusConflict("reset", s.name(ctx, rt), rt)
		}
		var err error
		if rt, err = s.release(ctx, rt, KillReset, store.RuntimeIdle); err != nil {
			return rt, err
		}
		if rt, err = s.dropSnapshot(ctx, rt); err != nil {
			return rt, err
		}
		if wipeWorkspace {
			if err := s.removeWorkspace(ctx, rt); err != nil {
				return rt, err
			}
		}
		return rt, nil
	})
}

// release destroys rt's current sandbox, kills its row with reason, and
// moves rt to status with no sandbox. The caller holds the runtime's lock.
func (s *Service) release(ctx context.Context, rt store.Runtime, reason string, status store.RuntimeStatus) (store.Runtime, error) {
	var sb store.Sandbox
	if rt.CurrentSandboxID != "" {
		var err error
		if sb, err = s.store.GetSandbox(ctx, rt.CurrentSandboxID); err != nil && !errdefs.IsNotFound(err) {
			return rt, err
		}
		if sb.ID != "" && sb.State != store.SandboxKilled {
			if err := s.destroy(ctx, sb); err != nil {
				return rt, err
			}
		}
	}
	now := s.now()
	ended := sb // as killed
	killed := false
	err := s.store.InTx(ctx, func(q store.Queries) error {
		if sb.ID != "" && sb.State != store.SandboxKilled {
			if err := s.settle(ctx, q, sb.ID, now); err != nil {
				return err
			}
			var err error
			if ended, killed, err = killRow(ctx, q, sb.ID, reason, now); err != nil {
				return err
			}
		}
		to := store.RuntimeState{Status: status}
		if status == store.RuntimeError {
			to.StatusReason = "the sandbox no longer exists"
		}
		var err error
		rt, err = setState(ctx, q, rt, to, now)
		return err
	})
	if err == nil && killed {
		// A row killed before (a failed start's, one a reconciliation
		// found killed) was told of then.
		s.publish(Event{Kind: EventKilled, Runtime: rt, Sandbox: ended, Reason: reason, At: now})
	}
	return rt, err
}

func (s *Service) destroy(ctx context.Context, sb store.Sandbox) error {
	s.forgetAgent(sb.RuntimeID, sb.ID)
	s.activity.forget(sb.RuntimeID)
	if sb.ProviderSandboxID == "" {
		return nil
	}
	p, err := s.providers.Get(sb.Provider)
	if err != nil {
		return err
	}
	if err := p.Destroy(ctx, handleOf(sb)); err != nil && !errdefs.IsNotFound(err) {
		return providerFailure("destroy", err)
	}
	return nil
}

// killRow marks a ledger row killed, and returns it and whether this call
// killed it (false for a row killed already). The row stays forever.
func killRow(ctx context.Context, q tx, id, reason string, now time.Time) (store.Sandbox, bool, error) {
	sb, err := q.GetSandbox(ctx, id)
	if err != nil || sb.State == store.SandboxKilled {
		return sb, false, err
	}
	sb, err = q.KillSandbox(ctx, id, sb.Version, reason, "", now)
	return sb, err == nil, err
}

// recordChange writes what an action did to a sandbox, read as before and
// changed in memory to sb, with the store's verb for that step of its
// state machine. Only the state and the expiry an action moves are
// written; the billing columns belong to the ledger.
func recordChange(ctx context.Context, q tx, before, sb store.Sandbox) error {
	var err error
	switch {
	case sb.State == before.State:
		if sb.ExpiresAt.After(before.ExpiresAt) {
			_, err = q.ExtendSandboxExpiry(ctx, sb.ID, sb.ExpiresAt)
		}
	case sb.State == store.SandboxRunning:
		_, err = q.MarkSandboxRunning(ctx, sb.ID, before.Version, sb.RunningSince, sb.ExpiresAt)
	case sb.State == store.SandboxPaused:
		_, err = q.MarkSandboxPaused(ctx, sb.ID, before.Version, sb.PauseReason, sb.PausedAt)
	case sb.State == store.SandboxKilled:
		_, err = q.KillSandbox(ctx, sb.ID, before.Version, sb.KillReason, sb.Error, sb.KilledAt)
	default:
		err = fmt.Errorf("no store verb takes sandbox %s from %s to %s", sb.ID, before.State, sb.State)
	}
	return err
}

// KillSandbox kills a ledger row's compute. A row that backs a runtime
// unlinks it: the runtime goes back to idle, keeping its workspace. Killing
// a killed row returns it unchanged.
func (s *Service) KillSandbox(ctx context.Context, sandboxID string) (store.Sandbox, error) {
	sb, err := s.store.GetSandbox(ctx, sandboxID)
	if err != nil || sb.State == store.SandboxKilled {
		return sb, err
	}
	if sb.RuntimeID != "" {
		unlock, err := s.lockRuntime(ctx, sb.RuntimeID)
		if err != nil {
			return sb, err
		}
		defer unlock()
	}
	ctx, cancel := s.detached(ctx)
	defer cancel()
	if sb.RuntimeID != "" {
		rt, err := s.store.GetRuntime(ctx, sb.RuntimeID)
		switch {
		case err == nil && rt.CurrentSandboxID == sb.ID:
			if rt.Status == store.RuntimeStarting {
				return sb, errdefs.Conflict(CodeBusy, "sandbox %s is still starting; try again when it is running", sb.ID)
			}
			if _, err := s.release(ctx, rt, KillDeleted, store.RuntimeIdle); err != nil {
				return sb, err
			}
			return s.store.GetSandbox(ctx, sb.ID)
		case err != nil && !errors.Is(err, errdefs.ErrNotFound):
			return sb, err
		}
	}
	if sb, err = s.store.GetSandbox(ctx, sb.ID); err != nil || sb.State == store.SandboxKilled {
		return sb, err
	}
	if err := s.destroy(ctx, sb); err != nil {
		return sb, err
	}
	now := s.now()
	err = s.store.InTx(ctx, func(q store.Queries) error {
		if err := s.settle(ctx, q, sb.ID, now); err != nil {
			return err
		}
		_, _, err := killRow(ctx, q, sb.ID, KillDeleted, now)
		return err
	})
	if err != nil {
		return sb, err
	}
	return s.store.GetSandbox(ctx, sb.ID)
}

func idleTimeout(rt store.Runtime) time.Duration {
	return time.Duration(rt.Config.IdleTimeoutSeconds) * time.Second
}

// observe records a lifecycle transition that began at t0 and ended with
// *err. A transition that found nothing to do (an expiry not yet due) is
// not one.
func (s *Service) observe(action string, t0 time.Time, err *error) {
	if errors.Is(*err, errNotExpired) {
		return
	}
	s.metrics.Transition(action, time.Since(t0), *err)
}

// available reports a provider known to be down (its circuit breaker is
// open), so an action fails before it records anything.
func available(p provider.Provider) error {
	if a, ok := p.(interface{ Available() error }); ok {
		return a.Available()
	}
	return nil
}
